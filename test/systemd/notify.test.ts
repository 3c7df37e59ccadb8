/**
 * The systemd notifier, driven through a fake `systemd-notify` placed first on PATH: the fake
 * records its arguments and NOTIFY_SOCKET, one line per call, and can be held (to keep a call
 * in flight) or made to fail, so the test sees exactly what systemd would have been sent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, readFileSync, existsSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createNotifier, watchdogIntervalFrom } from '../../src/daemon/systemd-notify.js';
import { createLogger } from '../../src/core/log.js';

interface Fake {
  dir: string;
  env: NodeJS.ProcessEnv;
  calls(): string[];
  hold(): void;
  release(): void;
  failNext(count: number): void;
  cleanup(): void;
}

function fakeSystemdNotify(): Fake {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-notify-'));
  const record = join(dir, 'calls.log');
  const holdFile = join(dir, 'hold');
  const failFile = join(dir, 'fail-count');
  // Records "<NOTIFY_SOCKET>|<args>", waits while the hold file exists, fails while fail-count > 0.
  writeFileSync(
    join(dir, 'systemd-notify'),
    [
      '#!/bin/sh',
      `echo "$NOTIFY_SOCKET|$*" >> '${record}'`,
      `while [ -e '${holdFile}' ]; do sleep 0.02; done`,
      `if [ -s '${failFile}' ]; then n=$(cat '${failFile}'); if [ "$n" -gt 0 ]; then echo $((n-1)) > '${failFile}'; exit 1; fi; fi`,
      'exit 0',
      '',
    ].join('\n'),
  );
  chmodSync(join(dir, 'systemd-notify'), 0o755);
  return {
    dir,
    env: { PATH: `${dir}:${process.env.PATH ?? '/usr/bin:/bin'}`, NOTIFY_SOCKET: '/run/systemd/notify-test' },
    calls: () => (existsSync(record) ? readFileSync(record, 'utf8').split('\n').filter(Boolean) : []),
    hold: () => writeFileSync(holdFile, ''),
    release: () => rmSync(holdFile, { force: true }),
    failNext: (count) => writeFileSync(failFile, String(count)),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

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
  assert.equal(watchdogIntervalFrom({ NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '20000000', WATCHDOG_PID: '42' }, 42), 10_000);
  assert.equal(watchdogIntervalFrom({ NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '20000000', WATCHDOG_PID: '7' }, 42), null);
  assert.equal(watchdogIntervalFrom({ WATCHDOG_USEC: '20000000' }, 42), null);
  assert.equal(watchdogIntervalFrom({ NOTIFY_SOCKET: '/x' }, 42), null);
  assert.equal(watchdogIntervalFrom({ NOTIFY_SOCKET: '/x', WATCHDOG_USEC: 'junk' }, 42), null);
});

test('ready, watchdog, status and stopping reach systemd-notify with the right arguments', { timeout: 10_000 }, async () => {
  const fake = fakeSystemdNotify();
  try {
    const { log } = capturingLogger();
    const env = { ...fake.env, WATCHDOG_USEC: '20000000' };
    const n = createNotifier(log, { env, pid: 4242 });
    assert.equal(n.enabled, true);
    assert.equal(n.watchdogIntervalMs, 10_000);

    n.watchdog();
    await until(() => fake.calls().length === 1);
    n.ready('reader enabled');
    await until(() => fake.calls().length === 2);
    n.watchdog();
    await until(() => fake.calls().length === 3);
    n.status('line one\nline two');
    await until(() => fake.calls().length === 4);
    n.stopping();
    await until(() => fake.calls().length === 5);

    assert.deepEqual(fake.calls(), [
      // Before READY a ping also extends the start timeout (4 intervals, in microseconds).
      '/run/systemd/notify-test|WATCHDOG=1 EXTEND_TIMEOUT_USEC=40000000',
      '/run/systemd/notify-test|--pid=4242 READY=1 STATUS=reader enabled',
      '/run/systemd/notify-test|WATCHDOG=1',
      '/run/systemd/notify-test|STATUS=line one line two',
      '/run/systemd/notify-test|STOPPING=1',
    ]);
  } finally {
    fake.cleanup();
  }
});

test('at most one call is in flight; messages sent meanwhile are merged into the next call', { timeout: 10_000 }, async () => {
  const fake = fakeSystemdNotify();
  try {
    const { log } = capturingLogger();
    const n = createNotifier(log, { env: { ...fake.env, WATCHDOG_USEC: '10000000' }, pid: 7 });
    fake.hold();
    n.ready();
    await until(() => fake.calls().length === 1);
    // The first call is held: these four must wait and then go out as one call.
    n.watchdog();
    n.status('first');
    n.watchdog();
    n.status('second');
    await sleep(100);
    assert.equal(fake.calls().length, 1, 'a second systemd-notify was started while one was in flight');
    fake.release();
    await until(() => fake.calls().length === 2);
    await sleep(100);
    assert.deepEqual(fake.calls(), ['/run/systemd/notify-test|--pid=7 READY=1', '/run/systemd/notify-test|WATCHDOG=1 STATUS=second']);
  } finally {
    fake.release();
    fake.cleanup();
  }
});

test('STOPPING does not wait behind a call in flight: the daemon may exit before that call returns', { timeout: 10_000 }, async () => {
  const fake = fakeSystemdNotify();
  try {
    const { log } = capturingLogger();
    const n = createNotifier(log, { env: { ...fake.env, WATCHDOG_USEC: '10000000' }, pid: 7 });
    fake.hold();
    n.watchdog();
    await until(() => fake.calls().length === 1);
    // The watchdog ping is still held (a slow fork under load); STOPPING goes out beside it.
    n.stopping();
    await until(() => fake.calls().length === 2);
    assert.deepEqual(fake.calls(), ['/run/systemd/notify-test|WATCHDOG=1 EXTEND_TIMEOUT_USEC=20000000', '/run/systemd/notify-test|STOPPING=1']);
  } finally {
    fake.release();
    fake.cleanup();
  }
});

test('a failed READY is retried once, and the failure is logged once', { timeout: 10_000 }, async () => {
  const fake = fakeSystemdNotify();
  try {
    const { log, lines } = capturingLogger();
    const n = createNotifier(log, { env: fake.env, pid: 9 });
    fake.failNext(2);
    n.ready('up');
    await until(() => fake.calls().length === 2);
    await sleep(100);
    // Both attempts failed: no third attempt, no endless loop.
    assert.deepEqual(fake.calls(), ['/run/systemd/notify-test|--pid=9 READY=1 STATUS=up', '/run/systemd/notify-test|--pid=9 READY=1']);
    assert.equal(lines.filter((l) => String(l.msg).includes('systemd-notify failed')).length, 1);
    n.stopping();
    await until(() => fake.calls().length === 3);
    assert.equal(fake.calls()[2], '/run/systemd/notify-test|STOPPING=1');
  } finally {
    fake.cleanup();
  }
});

test('without NOTIFY_SOCKET nothing is spawned and every call is a no-op', { timeout: 10_000 }, async () => {
  const fake = fakeSystemdNotify();
  try {
    const { log, lines } = capturingLogger();
    const env = { PATH: fake.env.PATH, WATCHDOG_USEC: '20000000' };
    const n = createNotifier(log, { env });
    assert.equal(n.enabled, false);
    assert.equal(n.watchdogIntervalMs, null);
    n.ready('x');
    n.watchdog();
    n.status('y');
    n.stopping();
    await sleep(100);
    assert.deepEqual(fake.calls(), []);
    assert.equal(lines.filter((l) => String(l.msg).includes('NOTIFY_SOCKET is not set')).length, 1);
  } finally {
    fake.cleanup();
  }
});

test('a missing systemd-notify command is logged once and then left alone', { timeout: 10_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-notify-missing-'));
  try {
    const { log, lines } = capturingLogger();
    const n = createNotifier(log, {
      env: { PATH: dir, NOTIFY_SOCKET: '/run/systemd/notify-test', WATCHDOG_USEC: '2000000' },
      command: join(dir, 'systemd-notify'),
    });
    n.ready();
    await until(() => !n.enabled);
    n.watchdog();
    n.stopping();
    await sleep(100);
    const warnings = lines.filter((l) => String(l.msg).includes('is not installed'));
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]?.level, 'warn');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
