/**
 * The systemd notifier: the real qrvend-notify helper sending to a real unix datagram socket
 * (notify-sink.ts), so the test sees exactly the datagrams systemd would have read.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { createNotifier, watchdogIntervalFrom } from '../../src/daemon/systemd-notify.js';
import { createLogger } from '../../src/core/log.js';
import { startNotifySink } from './notify-sink.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger({ level: 'debug', destination }), lines };
}

/** Polls until the condition holds; the test's own timeout bounds the wait. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await sleep(10);
}

test('watchdog interval is half of WATCHDOG_USEC, only for our PID and only under systemd', () => {
  assert.equal(watchdogIntervalFrom({ NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '20000000' }, 42), 10_000);
  assert.equal(
    watchdogIntervalFrom({ NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '20000000', WATCHDOG_PID: '42' }, 42),
    10_000,
  );
  assert.equal(watchdogIntervalFrom({ NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '20000000', WATCHDOG_PID: '7' }, 42), null);
  assert.equal(watchdogIntervalFrom({ WATCHDOG_USEC: '20000000' }, 42), null);
  assert.equal(watchdogIntervalFrom({ NOTIFY_SOCKET: '/x' }, 42), null);
  assert.equal(watchdogIntervalFrom({ NOTIFY_SOCKET: '/x', WATCHDOG_USEC: 'junk' }, 42), null);
});

test(
  'ready, watchdog, status and stopping reach the notify socket as sd_notify sends them',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const sink = await startNotifySink();
    try {
      const { log } = capturingLogger();
      const n = createNotifier(log, { env: { NOTIFY_SOCKET: sink.path, WATCHDOG_USEC: '20000000' }, pid: 4242 });
      assert.equal(n.enabled, true);
      assert.equal(n.watchdogIntervalMs, 10_000);
      n.watchdog();
      n.ready('reader enabled');
      n.watchdog();
      n.status('line one\nline two');
      n.stopping();
      await until(() => sink.messages().length === 7);
      assert.deepEqual(sink.messages(), [
        // Before READY a ping also extends the start timeout (4 intervals, in microseconds).
        'WATCHDOG=1 EXTEND_TIMEOUT_USEC=40000000',
        'READY=1 MAINPID=4242 STATUS=reader enabled',
        // The helper waits until systemd has read the state changes (sd_notify_barrier).
        'BARRIER=1',
        'WATCHDOG=1',
        'STATUS=line one line two',
        'STOPPING=1',
        'BARRIER=1',
      ]);
    } finally {
      await sink.close();
    }
  },
);

test(
  'a systemd that does not read never holds up the calling thread; READY and STOPPING arrive once it reads',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const sink = await startNotifySink();
    try {
      const { log } = capturingLogger();
      const n = createNotifier(log, { env: { NOTIFY_SOCKET: sink.path, WATCHDOG_USEC: '20000000' }, pid: 7 });
      sink.pause();
      // Far more than the socket's queue and the pipe hold: the helper blocks, the calls do not.
      n.ready();
      for (let i = 0; i < 20_000; i++) n.status(`status ${i} ${'x'.repeat(100)}`);
      n.stopping();
      // The event loop still turns while the helper is blocked.
      await nextTurn();
      sink.resume();
      await until(() => sink.messages().includes('STOPPING=1'));
      const got = sink.messages();
      assert.equal(got[0], 'READY=1 MAINPID=7');
      // The unwritten backlog is bounded: STATUS past it was dropped, STOPPING was not.
      assert.ok(got.length < 20_000, `${got.length} messages: nothing was dropped`);
    } finally {
      await sink.close();
    }
  },
);

test('without NOTIFY_SOCKET nothing is started and every call is a no-op', { timeout: TEST_DEADLINE_MS }, async () => {
  const { log, lines } = capturingLogger();
  const n = createNotifier(log, { env: { WATCHDOG_USEC: '20000000' }, helper: '/nonexistent/qrvend-notify' });
  assert.equal(n.enabled, false);
  assert.equal(n.watchdogIntervalMs, null);
  n.ready('x');
  n.watchdog();
  n.status('y');
  n.stopping();
  assert.equal(lines.filter((l) => String(l.msg).includes('NOTIFY_SOCKET is not set')).length, 1);
  assert.equal(lines.filter((l) => l.level === 'error').length, 0);
});

test(
  'a missing helper is logged once at error, naming what systemd will do',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-notify-missing-'));
    try {
      const { log, lines } = capturingLogger();
      const n = createNotifier(log, {
        env: { NOTIFY_SOCKET: join(dir, 'notify'), WATCHDOG_USEC: '2000000' },
        helper: join(dir, 'qrvend-notify'),
      });
      await until(() => !n.enabled);
      n.ready();
      n.watchdog();
      n.stopping();
      await sleep(50);
      const errors = lines.filter((l) => l.level === 'error');
      assert.equal(errors.length, 1, JSON.stringify(lines));
      assert.match(String(errors[0]?.msg), /systemd will time the agent out/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'a send that fails is reported by the helper and logged at warn, bounded',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-notify-nosock-'));
    try {
      const { log, lines } = capturingLogger();
      // Nothing listens there: every send fails (ENOENT), the helper carries on.
      const n = createNotifier(log, { env: { NOTIFY_SOCKET: join(dir, 'notify'), WATCHDOG_USEC: '2000000' } });
      for (let i = 0; i < 5; i++) n.watchdog();
      await until(() => lines.some((l) => l.level === 'warn'));
      await sleep(100);
      const warnings = lines.filter((l) => l.level === 'warn');
      assert.equal(warnings.length, 1, 'one line for the first failure; the rest are counted');
      assert.match(String(warnings[0]?.helperSays), /cannot send to NOTIFY_SOCKET/);
      assert.equal(n.enabled, true, 'the helper stays up for the next message');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
