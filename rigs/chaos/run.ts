#!/usr/bin/env node
/**
 * `npm run chaos`: the chaos run (docs/decisions/reliability-suite.md), the crash test at full size
 * (docs/decisions/ledger-and-outbox.md) and the soak.
 * Loopback only, bounded in time; exits 0 only when nothing was lost, doubled or left unresolved.
 *
 *   node dist/rigs/chaos/run.js [--profile chaos|crash] [--sessions N] [--kills N]
 *                                  [--duration S] [--seed N] [--keep-dir]
 *   node dist/rigs/chaos/run.js --soak [--vends N] [--duration S] [--sample-every S]
 */
import { parseArgs } from 'node:util';
import { runChaos, type ChaosProfile } from './chaos.js';
import { formatReport } from './report.js';
import { formatSoak, runSoak } from './soak.js';

const USAGE = `usage: run.js [--profile chaos|crash] [--sessions N] [--kills N] [--duration S] [--seed N] [--keep-dir]
       run.js --soak [--vends N] [--duration S] [--sample-every S] [--seed N]`;

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`--${name} ${text}: expected a whole number\n${USAGE}\n`);
    process.exit(64);
  }
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      profile: { type: 'string', default: 'chaos' },
      sessions: { type: 'string' },
      kills: { type: 'string' },
      duration: { type: 'string' },
      seed: { type: 'string' },
      'keep-dir': { type: 'boolean', default: false },
      soak: { type: 'boolean', default: false },
      vends: { type: 'string' },
      'sample-every': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const seed = positive('seed', values.seed, Date.now() % 1_000_000);
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  if (values.soak) {
    const report = await runSoak({
      vends: positive('vends', values.vends, 100_000),
      maxMs: positive('duration', values.duration, 900) * 1000,
      sampleEveryMs: positive('sample-every', values['sample-every'], 30) * 1000,
      seed,
      progress,
    });
    process.stdout.write(`${formatSoak(report)}\n`);
    return report.ok ? 0 : 1;
  }
  const profile = values.profile as ChaosProfile;
  if (profile !== 'chaos' && profile !== 'crash') {
    process.stderr.write(`--profile ${profile}: expected chaos or crash\n${USAGE}\n`);
    return 64;
  }
  const report = await runChaos({
    profile,
    sessions: positive('sessions', values.sessions, profile === 'chaos' ? 1000 : 0),
    minKills: positive('kills', values.kills, profile === 'crash' ? 200 : 0),
    maxMs: positive('duration', values.duration, 900) * 1000,
    seed,
    progress,
    keepDir: values['keep-dir'],
  });
  process.stdout.write(`${formatReport(report)}\n`);
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`chaos run failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(70);
  },
);
