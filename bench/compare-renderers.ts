/**
 * One-off, side by side: the old renderer (hand-made 5x7 bitmap font, before docs/decisions/consumer-screen.md) against
 * the current one (Skia text), drawing the same dynamic QR screens into an 800x480 XRGB8888
 * frame, alternating old and new sample by sample so both see the same machine noise. The new
 * renderer is timed twice: with the amounts and product of a real machine (1.00 to 9.00, one
 * product: its text lines come from the line cache) and with an amount and product never shown
 * before (every such line drawn by Skia).
 *
 *   node dist/bench/compare-renderers.js OLD_DIST [renders]
 *
 * OLD_DIST is a compiled tree of the old src/ (git archive of the commit before the change, built
 * with tsc); see BENCHMARKS.md for the exact steps. Prints one JSON line per renderer.
 */
import { performance } from 'node:perf_hooks';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createFrame } from '../src/display/frame.js';
import { defaultLayoutContext } from '../src/display/layout.js';
import { renderScreen } from '../src/display/render.js';
import { BENCH_GEOMETRY } from '../src/display/timing.js';
import { summarize } from './stats.js';

const [oldDist, countArg] = process.argv.slice(2);
if (!oldDist) throw new Error('usage: compare-renderers OLD_DIST [renders]');
const renders = Math.min(5000, Math.max(10, Number(countArg ?? 1000)));
const NOW = 1_700_000_000_000;

type OldRender = (frame: unknown, screen: unknown, nowMs: number) => unknown;
const oldModule = (await import(pathToFileURL(join(resolve(oldDist), 'src/display/render.js')).href)) as {
  renderScreen: OldRender;
};
const oldFrameModule = (await import(pathToFileURL(join(resolve(oldDist), 'src/display/frame.js')).href)) as {
  createFrame: (g: unknown) => unknown;
};

function payload(n: number): string {
  const tx = n.toString(16).padStart(32, '0');
  return (
    `00020101021226860014com.example.pay0136${tx}0208QRVEND010311VENDING-0015204581453039785405` +
    `${(1 + (n % 9)).toFixed(2).padStart(5, '0')}5802DE5913QRVEND DEMO 16005BERLIN62410525` +
    `${tx.slice(0, 25)}0708QRVEND016304ABCD`
  );
}

const newFrame = createFrame(BENCH_GEOMETRY);
const oldFrame = oldFrameModule.createFrame(BENCH_GEOMETRY);
const context = defaultLayoutContext({ shownAtMs: NOW, catalog: { '12': { name: 'Sparkling water 0.5 l' } } });
const times = { old: [] as number[], new: [] as number[], 'new-cold-lines': [] as number[] };
for (let n = -20; n < renders; n++) {
  const common = {
    kind: 'dynamic-qr' as const,
    qrText: payload(n + 100_000),
    amount: 1 + (Math.abs(n) % 9),
    currencyCode: 'EUR',
    decimalPlaces: 2,
    expiresAtMs: NOW + 45_000,
  };
  let t = performance.now();
  oldModule.renderScreen(oldFrame, common, NOW);
  const oldMs = performance.now() - t;
  // A new QR text for the new renderer too, so neither gets the matrix from the cache.
  const fresh = { ...common, qrText: payload(n + 900_000), item: 12 };
  t = performance.now();
  renderScreen(newFrame, fresh, NOW, context);
  const newMs = performance.now() - t;
  // The worst case for the line cache: an amount and a product never shown before.
  const cold = { ...common, qrText: payload(n + 1_700_000), amount: 1 + (n + 20) / 100, item: 100_000 + n };
  t = performance.now();
  renderScreen(newFrame, cold, NOW, context);
  const coldMs = performance.now() - t;
  if (n >= 0) {
    times.old.push(oldMs);
    times.new.push(newMs);
    times['new-cold-lines'].push(coldMs);
  }
}
for (const [name, samples] of Object.entries(times)) {
  const s = summarize(samples);
  const figures = {
    renderer: name,
    samples: samples.length,
    p50: +s.p50.toFixed(3),
    p99: +s.p99.toFixed(3),
    max: +s.max.toFixed(3),
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
