import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cpuTicks,
  parseCtxtSwitches,
  parseIoField,
  parseSchedstatRunNs,
  parseStatTicks,
  threadSwitches,
  threadsRunNs,
  USER_HZ,
  writeBytes,
} from '../../bench/support/proc.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

/** statfs f_type of tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;

const T = { timeout: TEST_DEADLINE_MS };

test('utime + stime are counted after the last ")" even when the command name holds spaces and parentheses', T, () => {
  // Fields: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
  const line = '4242 (node (main) x) S 1 4242 4242 0 -1 4194560 900 0 3 0 1234 567 0 0 20 0 11 0 100 1000 200\n';
  assert.equal(parseStatTicks(line), 1234 + 567);
});

test('a stat text without the command name is refused with a clear error', T, () => {
  assert.throws(() => parseStatTicks('garbage'), /no "\)"/);
  assert.throws(() => parseStatTicks('1 (x) S 1 2'), /utime\/stime/);
});

test('context switches and io fields are read by name', T, () => {
  const status = 'Name:\tnode\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t7\n';
  assert.deepEqual(parseCtxtSwitches(status), { voluntary: 150, nonvoluntary: 7 });
  const io =
    'rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 81920\ncancelled_write_bytes: 0\n';
  assert.equal(parseIoField(io, 'write_bytes'), 81920);
  assert.equal(parseIoField(io, 'read_bytes'), 4096);
  assert.throws(() => parseIoField(io, 'nope'), /no nope/);
  assert.throws(() => parseCtxtSwitches('Name: x\n'), /ctxt_switches/);
});

test('the readers agree with this process own /proc files', T, () => {
  const s = threadSwitches(process.pid);
  assert.ok(s.threads >= 1);
  assert.ok(s.voluntary + s.nonvoluntary > 0);
  const own = parseCtxtSwitches(readFileSync(`/proc/${process.pid}/task/${process.pid}/status`, 'utf8'));
  assert.ok(s.voluntary >= own.voluntary);
});

test('cpuTicks counts the CPU this process burns: 100 ms of it is about 10 ticks', T, () => {
  // The kernel's own account of this process (getrusage) says when 100 ms of CPU were spent;
  // utime + stime must have grown by about as much (USER_HZ ticks, rounded either way).
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const ticksBefore = cpuTicks(process.pid);
  const from = cpuMs();
  let spin = 0;
  while (cpuMs() - from < 100) spin += 1;
  const ticks = cpuTicks(process.pid) - ticksBefore;
  assert.ok(spin > 0);
  assert.ok(ticks >= (100 / 1000) * USER_HZ - 3, `${ticks} ticks for 100 ms of CPU`);
});

test('writeBytes counts what this process sends to storage: 1 MiB written and synced', T, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-proc-'));
  try {
    // tmpfs has no storage layer: nothing there is ever counted in write_bytes.
    if (statfsSync(dir).type === TMPFS_MAGIC) return t.skip(`${tmpdir()} is tmpfs, which write_bytes does not count`);
    const before = writeBytes(process.pid);
    const fd = openSync(join(dir, 'written'), 'w');
    try {
      writeSync(fd, Buffer.alloc(1 << 20, 0x5a));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const written = writeBytes(process.pid) - before;
    assert.ok(written >= 1 << 20, `${written} bytes counted for 1 MiB written and synced`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('schedstat: the first field is the time on a CPU in ns', T, () => {
  assert.equal(parseSchedstatRunNs('123456789 2000 17\n'), 123456789);
  assert.throws(() => parseSchedstatRunNs('x y z'), /schedstat/);
  assert.ok(threadsRunNs(process.pid) > 0);
});
