/**
 * Render timing for the benchmark ("QR render to an 800x480 32-bit framebuffer", docs/decisions/targets.md):
 * draws a screen `count` times into one framebuffer-format frame and returns each duration in ms.
 * Every render is complete (clear, QR, text), as the display worker does it.
 */
import { performance } from 'node:perf_hooks';
import type { Screen } from '../ipc/messages.js';
import { createFrame, type Frame, type FrameGeometry } from './frame.js';
import { renderScreen } from './render.js';
import { defaultLayoutContext, type LayoutContext } from './layout.js';

export const BENCH_GEOMETRY: FrameGeometry = { width: 800, height: 480, stride: 800 * 4, format: 'xrgb8888' };

export interface TimeRendersOptions {
  geometry?: FrameGeometry;
  /** Called after each render inside the timed span, e.g. to write the frame to a file. */
  output?: (frame: Frame) => void;
  /** Clock for the countdown text (default Date.now). */
  now?: () => number;
  /** Language, locale and colours (default: English). */
  context?: LayoutContext;
}

export function timeRenders(screen: Screen, count: number, options: TimeRendersOptions = {}): number[] {
  const frame = createFrame(options.geometry ?? BENCH_GEOMETRY);
  const now = options.now ?? Date.now;
  const context = options.context ?? defaultLayoutContext();
  const durations: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    renderScreen(frame, screen, now(), context);
    options.output?.(frame);
    durations.push(performance.now() - started);
  }
  return durations;
}
