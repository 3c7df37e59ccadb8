/**
 * The chaos harness: a bench rig plus the bookkeeping of everything done to it. It kills the
 * daemon (SIGKILL, at a chosen moment or after a random delay), snapshots what the daemon had
 * committed when it died, restarts it and waits for its outbox to drain; it unplugs and replugs
 * the serial line and sprays noise; and it keeps one Attempt record per session so the audit can
 * hold each session's vends against exactly the gateway records it produced.
 */
import { join } from 'node:path';
import { createRig, until, type Rig, type RigOptions } from '../rig.js';
import type { BoardCommand } from '../../src/mdb/codec/index.js';
import { readAgentOutbox, readAgentTransactions, readKeptAtKill, type AgentTransaction } from './agent-ledger.js';
import { Dice } from './random.js';

/** Thrown out of a session's steps when the daemon is gone: the session is over. */
export class AgentGone extends Error {
  constructor() {
    super('the daemon was killed');
  }
}

/** The named moments of the crash test (docs/decisions/ledger-and-outbox.md) and the chaos run. */
export const KILL_MOMENTS = [
  'after-start-approved',
  'after-c-start',
  'between-vend-approve-and-success',
  'after-vend-success',
  'after-session-end',
  'during-dynamic-poll',
  'after-payment-approval',
] as const;
export type KillMoment = (typeof KILL_MOMENTS)[number];

export type KillPlan = { kind: 'none' } | { kind: 'moment'; moment: KillMoment } | { kind: 'delay'; ms: number };

export interface VendSuccessMark {
  atMs: number;
  amountMinor: number;
  /** The VMC dispensed after the daemon had died (approved, then the reader went away). */
  afterKill: boolean;
}

export interface KillRecord {
  atMs: number;
  /** The moment name, or `delay <ms>`. */
  what: string;
  /** What the daemon had kept for this session's transactions when it died (ledger and vend journal). */
  committed: AgentTransaction[];
}

export interface Attempt {
  n: number;
  kind: 'static' | 'dynamic';
  plan: KillPlan;
  startedAtMs: number;
  /** Index of this session's first VMC session record. */
  vmcRecordsBefore: number;
  staticTxId: string | null;
  successes: VendSuccessMark[];
  /** Approved vends the VMC failed (c,ERR,VEND 3), with the same marks. */
  failures: VendSuccessMark[];
  kill: KillRecord | null;
  /** How the session went, for a post-mortem. */
  steps: string[];
}

export interface HarnessCounters {
  kills: number;
  killsByWhat: Record<string, number>;
  restarts: number;
  restartMsTotal: number;
  restartMsMax: number;
  unplugs: number;
  noiseLines: number;
  drainWaits: number;
}

export interface HarnessOptions {
  seed: number;
  rig?: RigOptions;
}

/**
 * How long the run waits for the daemon's next step before calling the session stuck (an
 * incident). A hang guard, not a speed check: the daemon's own deadlines (payment, gateway) run on
 * its monotonic clock whatever the harness waits, and at load 30 a Dynamic QR answer once took
 * longer than the 10.5 s the run used to allow.
 */
export const STEP_WAIT_MS = 20_000;
/**
 * How long a restart may take before the run calls it a hang. The report gives every restart's
 * time (average, maximum); on a shared 2-core machine at load 20-30 a start took over 20 s.
 */
const RESTART_WAIT_MS = 60_000;

export class Harness {
  readonly dice: Dice;
  readonly attempts: Attempt[] = [];
  readonly counters: HarnessCounters = {
    kills: 0,
    killsByWhat: {},
    restarts: 0,
    restartMsTotal: 0,
    restartMsMax: 0,
    unplugs: 0,
    noiseLines: 0,
    drainWaits: 0,
  };
  private pendingKill: Promise<void> | null = null;

  private constructor(
    readonly rig: Rig,
    seed: number,
  ) {
    this.dice = new Dice(seed);
  }

  static async create(options: HarnessOptions): Promise<Harness> {
    const rig = await createRig({ gatewaySeed: options.seed, ...options.rig });
    const h = new Harness(rig, options.seed);
    await rig.startAgent();
    return h;
  }

  get ledgerPath(): string {
    return join(this.rig.dir, 'ledger.sqlite');
  }

  get alive(): boolean {
    return this.rig.agent !== null;
  }

  /** Starts the bookkeeping of one session. */
  begin(kind: Attempt['kind'], plan: KillPlan): Attempt {
    const attempt: Attempt = {
      n: this.attempts.length + 1,
      kind,
      plan,
      startedAtMs: Date.now(),
      vmcRecordsBefore: this.rig.vmc.records().length,
      staticTxId: null,
      successes: [],
      failures: [],
      kill: null,
      steps: [],
    };
    this.attempts.push(attempt);
    if (plan.kind === 'delay') {
      const timer = setTimeout(() => void this.kill(attempt, `delay ${plan.ms} ms`), plan.ms);
      this.disarm = () => clearTimeout(timer);
    } else {
      this.disarm = () => {};
    }
    return attempt;
  }

  private disarm: () => void = () => {};

  /** Ends a session's bookkeeping: a random-delay kill that has not fired yet never will. */
  async end(): Promise<void> {
    this.disarm();
    if (this.pendingKill) await this.pendingKill;
  }

  /** SIGKILL now, and snapshot what the daemon had committed for this session. */
  kill(attempt: Attempt, what: string): Promise<void> {
    if (!this.alive || attempt.kill !== null) return this.pendingKill ?? Promise.resolve();
    const atMs = Date.now();
    const run = (async () => {
      await this.rig.stopAgent('SIGKILL');
      attempt.kill = { atMs, what, committed: readKeptAtKill(this.ledgerPath, attempt.startedAtMs) };
      attempt.steps.push(`killed (${what})`);
      this.counters.kills += 1;
      const key = what.startsWith('delay') ? 'random delay' : what;
      this.counters.killsByWhat[key] = (this.counters.killsByWhat[key] ?? 0) + 1;
    })();
    this.pendingKill = run.finally(() => {
      if (this.pendingKill === tracked) this.pendingKill = null;
    });
    const tracked = this.pendingKill;
    return tracked;
  }

  /** At a named moment: kill when this session's plan says so, then abort the session. */
  async at(attempt: Attempt, moment: KillMoment): Promise<void> {
    this.check();
    if (attempt.plan.kind === 'moment' && attempt.plan.moment === moment) {
      await this.kill(attempt, moment);
      throw new AgentGone();
    }
  }

  /** Throws AgentGone when the daemon is not running. */
  check(): void {
    if (!this.alive) throw new AgentGone();
  }

  /** Waits for `p`, unless the daemon dies first (AgentGone). `p` failing later is ignored. */
  async guard<T>(p: Promise<T>): Promise<T> {
    p.catch(() => {});
    const agent = this.rig.agent;
    if (agent === null) throw new AgentGone();
    const gone = agent.exited.then(() => {
      throw new AgentGone();
    });
    gone.catch(() => {});
    // A wait on the daemon (its logs) fails by itself when the daemon dies: that is AgentGone too.
    const waited = p.catch((err: unknown) => {
      if (agent.child.exitCode !== null || agent.child.signalCode !== null) throw new AgentGone();
      throw err;
    });
    return Promise.race([waited, gone]);
  }

  /** The next host command matching (wrap the wait in guard() to stop when the daemon dies). */
  command(match: (c: BoardCommand) => boolean, what: string, timeoutMs = STEP_WAIT_MS): Promise<BoardCommand> {
    const p = this.rig.nextCommand(match, timeoutMs, what);
    p.catch(() => {});
    return p;
  }

  /** A log line of the running daemon written after `fromIndex`. */
  async logAfter(
    fromIndex: number,
    match: (l: Record<string, unknown>) => boolean,
    what: string,
    timeoutMs = STEP_WAIT_MS,
  ): Promise<Record<string, unknown>> {
    const agent = this.rig.agent;
    if (agent === null) throw new AgentGone();
    const seen = agent.logs.slice(fromIndex).find(match);
    if (seen) return seen;
    const p = agent.waitForLog((l) => agent.logs.indexOf(l) >= fromIndex && match(l), timeoutMs, what);
    return this.guard(p);
  }

  logCount(): number {
    return this.rig.agent?.logs.length ?? 0;
  }

  /** After a kill: the VMC goes on physically; then the daemon restarts and its outbox drains. */
  async recover(attempt: Attempt): Promise<void> {
    const vmc = this.rig.vmc;
    if (vmc.state().vend === 'approved') {
      // Approved before the reader died: the machine dispenses (or fails) on its own.
      if (this.dice.chance(0.7)) {
        const amount = this.approvedAmount ?? 0;
        if (vmc.vendSuccess()) attempt.successes.push({ atMs: Date.now(), amountMinor: amount, afterKill: true });
        attempt.steps.push('VMC dispensed after the kill');
      } else {
        const amountMinor = this.approvedAmount ?? 0;
        if (vmc.vendFailure(3)) attempt.failures.push({ atMs: Date.now(), amountMinor, afterKill: true });
        attempt.steps.push('VMC failed the vend after the kill');
      }
    }
    await this.restart();
    await this.drain(attempt);
  }

  /** The amount of the vend the VMC last had approved (minor units), for after-kill dispensing. */
  approvedAmount: number | null = null;

  async restart(): Promise<void> {
    const t0 = Date.now();
    await this.rig.startAgent(RESTART_WAIT_MS);
    const ms = Date.now() - t0;
    this.counters.restarts += 1;
    this.counters.restartMsTotal += ms;
    this.counters.restartMsMax = Math.max(this.counters.restartMsMax, ms);
  }

  /** Waits until the daemon's outbox holds nothing pending (recovery's requests delivered). */
  async drain(attempt: Attempt | null, timeoutMs = 30_000): Promise<void> {
    this.counters.drainWaits += 1;
    const what = `the outbox to drain${attempt ? ` after session ${attempt.n}` : ''}`;
    await until(() => readAgentOutbox(this.ledgerPath).pending === 0, timeoutMs, what, 25);
  }

  /** Waits until the daemon's ledger holds `minor` sold for this static transaction. */
  async untilRecorded(txId: string, minor: number): Promise<void> {
    const since = this.attempts.at(-1)?.startedAtMs ?? 0;
    const recorded = () =>
      readAgentTransactions(this.ledgerPath, since).find((t) => t.txId === txId)?.recordedSoldMinor ?? 0;
    await this.guard(
      until(() => recorded() >= minor, STEP_WAIT_MS, `the daemon to record ${minor} sold on ${txId}`, 10),
    );
  }

  /** Pulls the serial adapter out for a moment and plugs it back in; waits for C,1 again. */
  async unplugReplug(downMs: number): Promise<void> {
    const enabled = this.command(
      (c) => c.kind === 'enable' && c.enabled,
      'the reader to be enabled again after a replug',
      15_000,
    );
    await this.rig.pty.unplug();
    await new Promise((r) => setTimeout(r, downMs));
    await this.rig.pty.replug();
    await this.rig.reattachVmc();
    this.counters.unplugs += 1;
    await this.guard(enabled);
  }

  async noise(lines: number): Promise<void> {
    await this.rig.vmc.noise(lines);
    this.counters.noiseLines += lines;
  }

  async close(): Promise<void> {
    this.disarm();
    await this.rig.close();
  }
}
