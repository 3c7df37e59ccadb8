import { test } from 'node:test';
import assert from 'node:assert/strict';
import { beyondFloor, ratioSpread } from '../../bench/ratio.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const range = (from: number, n: number, step = 1) => Array.from({ length: n }, (_, i) => from + i * step);

test('pooled ratio is p99 of all subject samples over p99 of all floor samples', T, () => {
  // 100 samples each: nearest-rank p99 is the 99th smallest.
  const floor = range(1, 100); // p99 = 99
  const subject = range(2, 100, 2); // p99 = 198
  const r = ratioSpread([
    { floor: floor.slice(0, 50), subject: subject.slice(50) },
    { floor: floor.slice(50), subject: subject.slice(0, 50) },
  ]);
  assert.equal(r.floorQ, 99);
  assert.equal(r.subjectQ, 198);
  assert.equal(r.pooled, 2);
});

test('per-block ratios, their median, min and max, in block order', T, () => {
  const r = ratioSpread(
    [
      { floor: [1, 1, 2], subject: [1, 1, 4] }, // 4 / 2
      { floor: [1, 1, 4], subject: [1, 1, 2] }, // 2 / 4
      { floor: [1, 1, 1], subject: [1, 1, 1] }, // 1
    ],
    1,
  );
  assert.deepEqual(r.blocks, [2, 0.5, 1]);
  assert.equal(r.median, 1);
  assert.equal(r.min, 0.5);
  assert.equal(r.max, 2);
});

test('a block with no samples on one side is left out of the spread, not counted as zero', T, () => {
  const r = ratioSpread(
    [
      { floor: [2], subject: [] },
      { floor: [2], subject: [3] },
    ],
    1,
  );
  assert.deepEqual(r.blocks, [1.5]);
  assert.equal(r.pooled, 1.5);
});

test('no samples at all gives NaN, never a made-up ratio', T, () => {
  const r = ratioSpread([]);
  assert.ok(Number.isNaN(r.pooled));
  assert.ok(Number.isNaN(r.median));
  assert.deepEqual(r.blocks, []);
});

test(
  'beyond the floor: each percentile of the subject minus the ' +
    'same percentile of the floor, not of per-sample differences',
  T,
  () => {
    const floor = range(1, 100); // p50 50, p99 99
    const subject = range(1, 100)
      .map((x) => x + 3)
      .reverse(); // p50 53, p99 102: pairwise differences range from -95 to 101
    const b = beyondFloor(subject, floor);
    assert.equal(b.p99, 3);
    assert.equal(b.p50, 3);
    assert.equal(b.floorP99, 99);
    assert.equal(b.floorP50, 50);
  },
);
