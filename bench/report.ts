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
  if (f.pass === null) return 'reference';
  return f.pass ? 'pass' : 'MISS';
}

function targetText(f: Figure): string {
  const derived = f.target.checks
    .filter((c) => c.derived !== undefined)
    .map((c) => `${c.stat} <= ${c.limit} (${c.derived})`);
  return derived.length > 0 ? `${f.target.text}; ${derived.join('; ')}` : f.target.text;
}

export function formatTable(figures: Figure[]): string {
  const head = ['figure', 'unit', 'n', 'p50', 'p99', 'max', 'rate/value', 'target', 'result'];
  const rows = figures.map((f) => [
    f.id,
    f.unit,
    String(f.samples),
    show(f.p50),
    show(f.p99),
    show(f.max),
    show(f.rate ?? f.value),
    targetText(f),
    verdict(f),
  ]);
  const widths = head.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((r) => r[i]!.length))));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  const details = figures.filter((f) => f.detail !== undefined).map((f) => `  ${f.id}: ${f.detail}`);
  return [
    line(head),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(line),
    ...(details.length > 0 ? ['', ...details] : []),
  ].join('\n');
}

const START = '<!-- bench:figures:start (written by `npm run bench`; edit outside these markers) -->';
const END = '<!-- bench:figures:end -->';

function cell(v: number | null): string {
  return v === null ? '' : String(v);
}

/** The figures table and machine line as markdown, for BENCHMARKS.md. */
export function formatMarkdown(results: Results): string {
  const m = results.machine;
  const lines = [
    `Run of ${results.generatedAt} (\`${results.command}\`, ${results.durationS} s). Machine: ${m.cpus} x ` +
      `${m.cpuModel}, ${m.memoryMb} MB, ` +
      `Linux ${m.kernel}, Node ${m.node}, scratch disk ${m.scratchDisk}. Load average at start/end: ` +
      `${results.loadAverage.start.join(' ')} / ${results.loadAverage.end.join(' ')}.`,
    '',
    '| figure | unit | n | p50 | p99 | max | rate / value | target | result | floor, spread, where it goes |',
    '|---|---|---:|---:|---:|---:|---:|---|---|---|',
    ...results.figures.map(
      (f) =>
        `| ${f.id} | ${f.unit} | ${f.samples} | ${cell(f.p50)} | ${cell(f.p99)} | ${cell(f.max)} | ${cell(f.rate ?? f.value)} | ${targetText(f)} | ${verdict(f).replace(/\|/g, '/')} | ${(f.detail ?? '').replace(/\|/g, '/')} |`,
    ),
  ];
  return lines.join('\n');
}

/** Replaces the generated section of BENCHMARKS.md (between the markers); false when the markers are missing. */
export function updateBenchmarksMd(
  path: string,
  results: Results,
  read: (p: string) => string,
  write: (p: string, s: string) => void,
): boolean {
  let text: string;
  try {
    text = read(path);
  } catch {
    return false;
  }
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) return false;
  write(path, `${text.slice(0, a + START.length)}\n${formatMarkdown(results)}\n${text.slice(b)}`);
  return true;
}
