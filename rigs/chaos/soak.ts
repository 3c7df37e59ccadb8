/**
 * The soak (docs/decisions/reliability-suite.md item 3): many simulated vends through the real daemon, mostly inside
 * long
 * Static QR sessions with a Dynamic QR purchase between them, while the daemon's resident memory
 * (/proc/<pid>/status VmRSS, all threads) and open file descriptors (/proc/<pid>/fd) are sampled.
 * Growth is judged from the samples after a warm-up: the median of the first three against the
 * median of the last three.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRig, until, type Rig } from '../rig.js';
import { checkSales } from '../../src/sim/checker.js';
import { Dice } from './random.js';

export interface SoakOptions {
  vends: number;
  maxMs: number;
  sampleEveryMs: number;
  seed: number;
  /** Samples taken before this share of the vends are warm-up (default 0.1). */
  warmupShare?: number;
  progress?: (line: string) => void;
}

export interface SoakSample {
  atMs: number;
  vends: number;
  rssKb: number;
  fds: number;
}

export interface SoakReport {
  vends: number;
  sessions: { static: number; dynamic: number };
  wallMs: number;
  vendsPerSecond: number;
  samples: SoakSample[];
  rssAfterWarmupKb: number;
  rssAtEndKb: number;
  rssGrowthKb: number;
  fdsAfterWarmup: number;
  fdsAtEnd: number;
  salesOk: boolean;
  salesSummary: string;
  /** Memory growth at most the design target (2 MB), no descriptor growth, every sale charged once. */
  ok: boolean;
}

/** docs/decisions/targets.md: growth after 100,000 vends at most 2 MB. */
export const RSS_GROWTH_LIMIT_KB = 2048;
const VENDS_PER_SESSION = 50;
const VEND_PRICE = 0.1;

function sample(pid: number, vends: number, t0: number): SoakSample {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = /VmRSS:\s+(\d+) kB/.exec(status);
  return { atMs: Date.now() - t0, vends, rssKb: rss ? Number(rss[1]) : 0, fds: readdirSync(`/proc/${pid}/fd`).length };
}

const median3 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function staticSession(rig: Rig, vends: number): Promise<number> {
  const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
  let result = await rig.start();
  for (let tries = 0; result.outcome.kind === 'declined' && result.outcome.code === 30 && tries < 100; tries++) {
    await new Promise((r) => setTimeout(r, 20));
    result = await rig.start();
  }
  if (result.outcome.kind !== 'approved') throw new Error(`Start not approved: ${JSON.stringify(result.outcome)}`);
  await opened;
  let sold = 0;
  for (let i = 0; i < vends; i++) {
    const answer = rig.nextCommand(
      (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny',
      10_000,
      'the vend answer',
    );
    if (!rig.vmc.select(1 + (i % 40), VEND_PRICE)) throw new Error('the VMC could not select');
    if ((await answer).kind !== 'vend-approve') throw new Error('vend denied inside the funds');
    rig.vmc.vendSuccess();
    sold += 1;
  }
  rig.vmc.endSession();
  return sold;
}

async function dynamicSession(rig: Rig, dice: Dice): Promise<number> {
  const answer = rig.nextCommand(
    (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny',
    10_000,
    'the dynamic answer',
  );
  if (!rig.vmc.select(dice.int(1, 40), 1.5)) throw new Error('the VMC could not select');
  if ((await answer).kind !== 'vend-approve') throw new Error('dynamic QR vend denied');
  rig.vmc.vendSuccess();
  return 1;
}

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const t0 = Date.now();
  const dice = new Dice(o.seed);
  const rig = await createRig({ vmc: { seed: o.seed }, config: { dynamicQr: { pollIntervalMs: 100 } } });
  try {
    const agent = await rig.startAgent();
    const samples: SoakSample[] = [];
    let vends = 0;
    const sessions = { static: 0, dynamic: 0 };
    let nextSample = 0;
    while (vends < o.vends && Date.now() - t0 < o.maxMs) {
      if (Date.now() >= nextSample) {
        samples.push(sample(agent.pid, vends, t0));
        nextSample = Date.now() + o.sampleEveryMs;
        o.progress?.(
          `${vends} vends, rss ${samples.at(-1)!.rssKb} kB, fds ${samples.at(-1)!.fds}, ` +
            `${Math.round((Date.now() - t0) / 1000)} s`,
        );
      }
      vends += await staticSession(rig, Math.min(VENDS_PER_SESSION, o.vends - vends));
      sessions.static += 1;
      if (vends < o.vends) {
        vends += await dynamicSession(rig, dice);
        sessions.dynamic += 1;
      }
    }
    // Let the outbox drain and the dynamic payment close before the last sample.
    await until(
      () => Object.values(rig.gateway.ledger().transactions).every((t) => t.state !== 'authorized'),
      30_000,
      'the last settlements',
    );
    await new Promise((r) => setTimeout(r, 1000));
    samples.push(sample(agent.pid, vends, t0));
    const warm = samples.filter((s) => s.vends >= o.vends * (o.warmupShare ?? 0.1));
    const first = warm.slice(0, 3);
    const last = warm.slice(-3);
    const rssAfterWarmupKb = median3(first.map((s) => s.rssKb));
    const rssAtEndKb = median3(last.map((s) => s.rssKb));
    const fdsAfterWarmup = median3(first.map((s) => s.fds));
    const fdsAtEnd = last.at(-1)?.fds ?? 0;
    const check = checkSales(rig.vmc.records(), rig.gateway.ledger());
    const wallMs = Date.now() - t0;
    const rssGrowthKb = rssAtEndKb - rssAfterWarmupKb;
    return {
      vends,
      sessions,
      wallMs,
      vendsPerSecond: Math.round((vends / wallMs) * 1000),
      samples,
      rssAfterWarmupKb,
      rssAtEndKb,
      rssGrowthKb,
      fdsAfterWarmup,
      fdsAtEnd,
      salesOk: check.ok,
      salesSummary: JSON.stringify({
        lostMinor: check.lostMinor,
        chargedNotVendedMinor: check.chargedNotVendedMinor,
        chargedTwice: check.chargedTwice.length,
        unresolved: check.unresolved.length,
      }),
      ok: check.ok && warm.length >= 2 && rssGrowthKb <= RSS_GROWTH_LIMIT_KB && fdsAtEnd <= fdsAfterWarmup,
    };
  } finally {
    await rig.close();
  }
}

export function formatSoak(r: SoakReport): string {
  const lines = [
    `soak: ${r.vends} vends (${r.sessions.static} static sessions of up to ${VENDS_PER_SESSION} vends, ` +
      `${r.sessions.dynamic} dynamic QR vends) in ${(r.wallMs / 1000).toFixed(0)} s (${r.vendsPerSecond} vends/s)`,
    `resident memory (VmRSS, all threads): ${r.rssAfterWarmupKb} kB after warm-up -> ${r.rssAtEndKb} kB at the end ` +
      `(growth ${r.rssGrowthKb} kB, limit ${RSS_GROWTH_LIMIT_KB} kB)`,
    `open file descriptors: ${r.fdsAfterWarmup} after warm-up -> ${r.fdsAtEnd} at the end`,
    `sales: ${r.salesOk ? 'every vend charged exactly once' : 'MISMATCH'} ${r.salesSummary}`,
    'samples (s, vends, rss kB, fds): ' +
      r.samples.map((s) => `${Math.round(s.atMs / 1000)}/${s.vends}/${s.rssKb}/${s.fds}`).join(' '),
    r.ok ? 'RESULT: OK' : 'RESULT: FAILED',
  ];
  return lines.join('\n');
}
