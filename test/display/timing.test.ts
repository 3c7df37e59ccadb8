import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BENCH_GEOMETRY, timeRenders } from '../../src/display/timing.js';
import type { Frame } from '../../src/display/frame.js';
import { decodeFrame } from './helpers.js';

describe('timeRenders (for the benchmark)', () => {
  it('renders the screen N times into an 800x480 XRGB8888 frame and returns one duration per render', () => {
    const frames: Frame[] = [];
    const durations = timeRenders({ kind: 'idle', qrText: 'bench-code' }, 5, { output: (f) => frames.push(f) });
    assert.equal(durations.length, 5);
    assert.ok(durations.every((d) => Number.isFinite(d) && d >= 0));
    assert.equal(frames.length, 5);
    const frame = frames[4]!;
    assert.deepEqual(
      [frame.width, frame.height, frame.stride, frame.format],
      [BENCH_GEOMETRY.width, BENCH_GEOMETRY.height, 3200, 'xrgb8888'],
    );
    assert.equal(decodeFrame(frame), 'bench-code');
  });
});
