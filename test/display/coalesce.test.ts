import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LatestOnly } from '../../src/display/coalesce.js';

describe('LatestOnly', () => {
  it('handles only the newest of the items pushed before it runs', () => {
    const queue: (() => void)[] = [];
    const handled: number[] = [];
    const latest = new LatestOnly<number>(
      (n) => handled.push(n),
      (run) => queue.push(run),
    );
    latest.push(1);
    latest.push(2);
    latest.push(3);
    assert.equal(queue.length, 1, 'one run scheduled for the burst');
    queue.shift()!();
    assert.deepEqual(handled, [3]);
    latest.push(4);
    assert.equal(queue.length, 1);
    queue.shift()!();
    assert.deepEqual(handled, [3, 4]);
  });

  it('drops what is pending on clear()', () => {
    const queue: (() => void)[] = [];
    const handled: string[] = [];
    const latest = new LatestOnly<string>(
      (s) => handled.push(s),
      (run) => queue.push(run),
    );
    latest.push('a');
    latest.clear();
    queue.shift()!();
    assert.deepEqual(handled, []);
  });
});
