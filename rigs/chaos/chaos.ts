/**
 * The chaos run and the crash test (docs/decisions/ledger-and-outbox.md and docs/decisions/reliability-suite.md): the
 * real daemon, both payment flows, session
 * after session, while the daemon is SIGKILLed at chosen moments and random delays, the gateway
 * misbehaves, the serial adapter is pulled and the line carries noise. At the end every fault is
 * lifted, the outbox drains, and the audit holds the VMC's vends against the gateway's ledger.
 *
 * Profiles:
 * - crash: no gateway or serial faults; nearly every session ends in a SIGKILL (docs/decisions/ledger-and-outbox.md).
 * - chaos: everything at once, a kill now and then (docs/decisions/reliability-suite.md).
 */
import { FAULT_KINDS, type FaultSpec } from '../../src/sim/gateway/index.js';
import { readAgentOutbox, readAgentTransactions } from './agent-ledger.js';
import { audit, type Audit } from './audit.js';
import {
  AgentGone,
  Harness,
  KILL_MOMENTS,
  type Attempt,
  type HarnessCounters,
  type KillMoment,
  type KillPlan,
} from './harness.js';
import { dynamicSession, staticSession, type SessionStyle } from './sessions.js';

export type ChaosProfile = 'crash' | 'chaos';

export interface ChaosOptions {
  profile: ChaosProfile;
  /** Run at least this many sessions. */
  sessions: number;
  /** crash: keep going until at least this many kills (and `sessions`). */
  minKills?: number;
  /** Stop starting sessions after this long (the drain and audit follow). */
  maxMs: number;
  seed: number;
  /** Progress lines (stderr in the CLI). */
  progress?: (line: string) => void;
  keepDir?: boolean;
  /**
   * crash: plan each kill target (KILL_TARGETS) in turn, until each has been hit once, before
   * anything is left to the dice; the run goes on until then. A short run that still kills at
   * every moment of both flows (the crash test of `npm test`); the long one leaves it all to chance.
   */
  coverMoments?: boolean;
}

export interface ChaosReport {
  profile: ChaosProfile;
  seed: number;
  wallMs: number;
  sessions: { total: number; static: number; dynamic: number };
  /** Sessions where a wait ran out or the daemon died unasked: each is a finding. */
  incidents: string[];
  counters: HarnessCounters;
  /** Kills per flow and moment (`static:after-c-start`, `dynamic:random delay`). */
  killsByTarget: Record<string, number>;
  gatewayFaults: Record<string, number>;
  audit: Audit;
  ok: boolean;
  dir: string;
  keptDir: boolean;
}

const STATIC_MOMENTS: readonly KillMoment[] = [
  'after-start-approved',
  'after-c-start',
  'between-vend-approve-and-success',
  'after-vend-success',
  'after-session-end',
];
const DYNAMIC_MOMENTS: readonly KillMoment[] = ['during-dynamic-poll', 'after-payment-approval', 'after-vend-success'];

/** The gateway's misbehaviour in the chaos profile (every kind at once, see docs/payments.md, gateway simulator). */
export const CHAOS_FAULTS: FaultSpec[] = [
  { kind: 'http500', rate: 0.04 },
  { kind: 'reset-before', rate: 0.03 },
  { kind: 'reset-after', rate: 0.04 },
  { kind: 'hang', rate: 0.01 },
  { kind: 'not-json', rate: 0.03 },
  { kind: 'bad-schema', rate: 0.03 },
];

const PAYMENT_TIMEOUT_MS = 2_500;
const GATEWAY_TIMEOUT_MS = 1_000;

/** Every kill the short crash run makes at least once: each named moment in each flow it belongs to, and a delay. */
export const KILL_TARGETS: readonly string[] = [
  ...STATIC_MOMENTS.map((m) => `static:${m}`),
  ...DYNAMIC_MOMENTS.map((m) => `dynamic:${m}`),
  'static:random delay',
  'dynamic:random delay',
];

function killsByTarget(h: Harness): Record<string, number> {
  const kills: Record<string, number> = {};
  for (const a of h.attempts) {
    if (a.kill === null) continue;
    const key = `${a.kind}:${a.kill.what.startsWith('delay') ? 'random delay' : a.kill.what}`;
    kills[key] = (kills[key] ?? 0) + 1;
  }
  return kills;
}

/** The next kill target not hit yet, as the session's kind and plan; null once every target was hit. */
function uncoveredPlan(h: Harness): { kind: Attempt['kind']; plan: KillPlan } | null {
  const hit = killsByTarget(h);
  const target = KILL_TARGETS.find((t) => (hit[t] ?? 0) === 0);
  if (target === undefined) return null;
  const [kind, what] = target.split(':') as [Attempt['kind'], string];
  const plan: KillPlan =
    what === 'random delay'
      ? { kind: 'delay', ms: h.dice.int(0, 700) }
      : { kind: 'moment', moment: what as KillMoment };
  return { kind, plan };
}

function planFor(h: Harness, kind: Attempt['kind'], profile: ChaosProfile): KillPlan {
  const { dice } = h;
  const killRate = profile === 'crash' ? 0.9 : 0.1;
  if (!dice.chance(killRate)) return { kind: 'none' };
  if (dice.chance(0.55))
    return { kind: 'moment', moment: dice.pick(kind === 'static' ? STATIC_MOMENTS : DYNAMIC_MOMENTS) };
  return { kind: 'delay', ms: dice.int(0, 700) };
}

/** Brings the VMC and the daemon back to "idle, reader enabled" after a session that went wrong. */
async function settleVmc(h: Harness): Promise<void> {
  const vmc = h.rig.vmc;
  if (vmc.state().vend === 'approved') vmc.vendFailure(3);
  if (vmc.state().session) vmc.endSession() || vmc.cancel();
  if (!h.alive) await h.restart();
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const t0 = Date.now();
  const h = await Harness.create({
    seed: o.seed,
    rig: {
      keepDir: o.keepDir,
      vmc: { seed: o.seed },
      config: {
        gateway: { timeoutMs: GATEWAY_TIMEOUT_MS, connectTimeoutMs: 500 },
        dynamicQr: { paymentTimeoutMs: PAYMENT_TIMEOUT_MS, pollIntervalMs: 100 },
        log: { level: 'info' },
      },
    },
  });
  const style: SessionStyle = {
    noiseRate: o.profile === 'chaos' ? 0.08 : 0,
    unplugMidSessionRate: o.profile === 'chaos' ? 0.02 : 0,
    paymentTimeoutMs: PAYMENT_TIMEOUT_MS,
  };
  if (o.profile === 'chaos') {
    h.rig.gateway.setFaults(CHAOS_FAULTS, o.seed);
    h.rig.gateway.control({ hangMs: GATEWAY_TIMEOUT_MS + 500 });
  }
  const incidents: string[] = [];
  const counts = { static: 0, dynamic: 0 };
  const minKills = o.minKills ?? 0;
  try {
    const uncovered = () => (o.coverMoments === true ? uncoveredPlan(h) : null);
    const owed = () => h.attempts.length < o.sessions || h.counters.kills < minKills || uncovered() !== null;
    while (Date.now() - t0 < o.maxMs && owed()) {
      const covering = uncovered();
      const kind = covering?.kind ?? (h.dice.chance(0.5) ? 'static' : 'dynamic');
      counts[kind] += 1;
      // One unplug early in every chaos run, however few sessions a slow machine fits in its
      // time (a short run once had none); then at random.
      const early = counts.static + counts.dynamic === 3 && h.counters.unplugs === 0;
      if (o.profile === 'chaos' && (early || h.dice.chance(0.015))) await h.unplugReplug(h.dice.int(50, 400));
      const attempt = h.begin(kind, covering?.plan ?? planFor(h, kind, o.profile));
      try {
        await (kind === 'static' ? staticSession(h, attempt, style) : dynamicSession(h, attempt, style));
        await h.end();
      } catch (err) {
        await h.end();
        if (!(err instanceof AgentGone) || attempt.kill === null) {
          incidents.push(`session ${attempt.n} (${kind}): ${(err as Error).message} [${attempt.steps.join('; ')}]`);
          await settleVmc(h);
          continue;
        }
      }
      if (attempt.kill !== null) await h.recover(attempt);
      if (o.progress && attempt.n % 25 === 0) {
        o.progress(`${attempt.n} sessions, ${h.counters.kills} kills, ${Math.round((Date.now() - t0) / 1000)} s`);
      }
    }
    // Faults lifted; the daemon up; everything owed delivered.
    h.rig.gateway.setFaults([]);
    if (!h.alive) await h.restart();
    await h.drain(null, 60_000).catch((err: Error) => incidents.push(`final drain: ${err.message}`));
    // Twice, a moment apart: nothing may still be on its way into the outbox.
    await new Promise((r) => setTimeout(r, 1_000));
    await h.drain(null, 60_000).catch((err: Error) => incidents.push(`final drain: ${err.message}`));
    const result = audit({
      attempts: h.attempts,
      vmc: h.rig.vmc.records(),
      gateway: h.rig.gateway.ledger(),
      agentTxs: readAgentTransactions(h.ledgerPath),
      outbox: readAgentOutbox(h.ledgerPath),
    });
    const gatewayFaults = Object.fromEntries(
      FAULT_KINDS.map((k) => [k, h.rig.gateway.ledger().summary.faults[k] ?? 0]),
    );
    return {
      profile: o.profile,
      seed: o.seed,
      wallMs: Date.now() - t0,
      sessions: { total: h.attempts.length, ...counts },
      incidents,
      counters: h.counters,
      killsByTarget: killsByTarget(h),
      gatewayFaults,
      audit: result,
      ok: result.ok && incidents.length === 0,
      dir: h.rig.dir,
      keptDir: o.keepDir === true,
    };
  } finally {
    await h.close();
  }
}

export { KILL_MOMENTS };
