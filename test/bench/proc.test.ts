import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cpuTicks, parseCtxtSwitches, parseIoField, parseSchedstatRunNs, parseStatTicks, threadSwitches, threadsRunNs, writeBytes } from '../../bench/support/proc.js';

const T = { timeout: 10_000 };

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
  const io = 'rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 81920\ncancelled_write_bytes: 0\n';
  assert.equal(parseIoField(io, 'write_bytes'), 81920);
  assert.equal(parseIoField(io, 'read_bytes'), 4096);
  assert.throws(() => parseIoField(io, 'nope'), /no nope/);
  assert.throws(() => parseCtxtSwitches('Name: x\n'), /ctxt_switches/);
});

test('the readers agree with this process own /proc files', T, () => {
  assert.ok(cpuTicks(process.pid) >= 0);
  const s = threadSwitches(process.pid);
  assert.ok(s.threads >= 1);
  assert.ok(s.voluntary + s.nonvoluntary > 0);
  const own = parseCtxtSwitches(readFileSync(`/proc/${process.pid}/task/${process.pid}/status`, 'utf8'));
  assert.ok(s.voluntary >= own.voluntary);
  assert.ok(writeBytes(process.pid) >= 0);
});

test('schedstat: the first field is the time on a CPU in ns', T, () => {
  assert.equal(parseSchedstatRunNs('123456789 2000 17\n'), 123456789);
  assert.throws(() => parseSchedstatRunNs('x y z'), /schedstat/);
  assert.ok(threadsRunNs(process.pid) > 0);
});
