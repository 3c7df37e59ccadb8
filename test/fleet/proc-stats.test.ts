import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCpuMs, parseMemoryKiB, percentile, processCpuMs, processMemoryKiB } from '../../src/sim/fleet/proc-stats.js';
import { publishedAtNs, simEventId } from '../../src/sim/fleet/messages.js';

test('/proc parsing: CPU from utime+stime (a command name with spaces and parentheses), memory in KiB', { timeout: 5_000 }, () => {
  const stat = '4242 (odd (name) x) S 1 4242 4242 0 -1 4194560 1200 0 0 0 250 75 0 0 20 0 3 0 100 1000000 2000 18446744073709551615';
  assert.equal(parseCpuMs(stat), 3250);
  assert.deepEqual(parseMemoryKiB('Name:\tmosquitto\nVmHWM:\t   12400 kB\nVmRSS:\t   11800 kB\n'), { rssKiB: 11800, hwmKiB: 12400 });
  assert.throws(() => parseCpuMs('1 (x) S'), /unreadable/);
  // This process, for real: some CPU used, some memory resident.
  assert.ok(processCpuMs(process.pid) > 0);
  assert.ok(processMemoryKiB(process.pid).rssKiB > 1000);
});

test('percentiles by nearest rank; the publish instant travels in a simulated eventId', { timeout: 5_000 }, () => {
  const values = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.equal(percentile(values, 50), 50);
  assert.equal(percentile(values, 99), 99);
  assert.equal(percentile(values, 100), 100);
  assert.ok(Number.isNaN(percentile([], 50)));
  const id = simEventId('vm-0042', 7, 123456789012345n);
  assert.equal(id, 'vm-0042:7:123456789012345');
  assert.equal(publishedAtNs(id), 123456789012345n);
  assert.equal(publishedAtNs('lobby-01-7'), null);
});
