/** The printed table and bench/results.json. */
import { writeFileSync } from 'node:fs';
import type { Figure } from './figure.js';
import type { MachineInfo } from './support/machine.js';

export interface Results {
  generatedAt: string;
  command: string;
  durationS: number;
  machine: MachineInfo;
  /** Load average when the run started and ended (other work on the machine skews the figures). */
  loadAverage: { start: number[]; end: number[] };
  figures: Figure[];
}

export function writeResults(path: string, results: Results): void {
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

const show = (v: number | null) => (v === null ? '-' : String(v));

function verdict(f: Figure): string {
  if (f.status === 'pending') return f.reason ?? 'pending';
  if (f.status === 'error') return `ERROR: ${f.reason ?? ''}`;
  return f.pass ? 'pass' : 'MISS';
}

function targetText(f: Figure): string {
  const derived = f.target.checks.filter((c) => c.derived !== undefined).map((c) => `${c.stat} <= ${c.limit} (${c.derived})`);
  return derived.length > 0 ? `${f.target.text}; ${derived.join('; ')}` : f.target.text;
}

export function formatTable(figures: Figure[]): string {
  const head = ['figure', 'unit', 'n', 'p50', 'p99', 'max', 'rate/value', 'target', 'result'];
  const rows = figures.map((f) => [f.id, f.unit, String(f.samples), show(f.p50), show(f.p99), show(f.max), show(f.rate ?? f.value), targetText(f), verdict(f)]);
  const widths = head.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((r) => r[i]!.length))));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
