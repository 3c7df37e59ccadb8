import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCpuMs, parseMemoryKiB, percentile, processCpuMs, processMemoryKiB } from '../../rigs/fleet/proc-stats.js';
import { publishedAtNs, simEventId } from '../../rigs/fleet/messages.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

test(
  '/proc parsing: CPU from utime+stime (a command name with spaces and parentheses), memory in KiB',
  { timeout: 5_000 },
  () => {
    const stat =
      '4242 (odd (name) x) S 1 4242 4242 0 -1 4194560 1200 0 0 0 250 ' +
      '75 0 0 20 0 3 0 100 1000000 2000 18446744073709551615';
    assert.equal(parseCpuMs(stat), 3250);
    assert.deepEqual(parseMemoryKiB('Name:\tmosquitto\nVmHWM:\t   12400 kB\nVmRSS:\t   11800 kB\n'), {
      rssKiB: 11800,
      hwmKiB: 12400,
    });
    assert.throws(() => parseCpuMs('1 (x) S'), /unreadable/);
  },
);

test('the readers follow this process: CPU it burns, memory it touches', { timeout: TEST_DEADLINE_MS }, () => {
  // getrusage (process.cpuUsage) says when 100 ms of CPU were spent; /proc must show about as
  // much (10 ms ticks, rounded either way).
  const rusageMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const cpuBefore = processCpuMs(process.pid);
  const from = rusageMs();
  while (rusageMs() - from < 100);
  const cpu = processCpuMs(process.pid) - cpuBefore;
  assert.ok(cpu >= 70, `${cpu} ms of CPU read for 100 ms burnt`);

  const memBefore = processMemoryKiB(process.pid);
  const touched = Buffer.alloc(64 << 20, 1); // every page written, so resident
  const memAfter = processMemoryKiB(process.pid);
  assert.ok(touched.length > 0);
  assert.ok(
    memAfter.rssKiB - memBefore.rssKiB >= 48 << 10,
    `RSS ${memBefore.rssKiB} KiB, then ${memAfter.rssKiB} KiB after touching 64 MiB`,
  );
  assert.ok(memAfter.hwmKiB >= memAfter.rssKiB, 'the high-water mark is at least the resident size');
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
