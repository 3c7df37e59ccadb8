/**
 * The real daemon under a (stand-in) systemd: a real unix datagram socket as NOTIFY_SOCKET
 * (test/systemd/notify-sink.ts) receiving what the daemon's qrvend-notify helper sends. READY
 * once the reader is enabled and the payment worker is ready, watchdog pings paced by the main
 * thread (with EXTEND_TIMEOUT_USEC until READY, even while the payment worker is held up),
 * STATUS on availability changes, STOPPING at SIGTERM.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { createRig, until } from '../../rigs/rig.js';
import { startNotifySink, type NotifySink } from '../systemd/notify-sink.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

/** A rig whose daemon inherits NOTIFY_SOCKET and a 400 ms watchdog. */
async function rigUnder(sink: NotifySink) {
  return createRig({ env: { NOTIFY_SOCKET: sink.path, WATCHDOG_USEC: '400000' } });
}

test(
  'READY at C,1 naming the daemon, watchdog pings, STATUS, STOPPING at SIGTERM',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const sink = await startNotifySink();
    t.after(() => sink.close());
    const rig = await rigUnder(sink);
    try {
      const agent = await rig.startAgent();
      const messages = () => sink.messages();
      await until(() => messages().some((m) => m.startsWith('READY=1')), 10_000, 'READY=1');
      await until(
        () => messages().filter((m) => m.startsWith('WATCHDOG=1')).length >= 3,
        10_000,
        'three watchdog pings',
      );
      assert.ok(
        messages().some((m) => m.includes('STATUS=reader enabled')),
        JSON.stringify(messages()),
      );
      const ready = messages().find((m) => m.startsWith('READY=1'))!;
      assert.match(ready, new RegExp(`MAINPID=${agent.pid}\\b`), 'READY names the daemon as the main process');
      // After READY the pings no longer extend the start timeout.
      const afterReady = messages().slice(messages().indexOf(ready));
      assert.ok(!afterReady.some((m) => m.includes('EXTEND_TIMEOUT_USEC')), JSON.stringify(afterReady));
      agent.child.kill('SIGTERM');
      assert.deepEqual(await agent.exited, { code: 0, signal: null });
      await until(() => messages().includes('STOPPING=1'), 5_000, 'STOPPING=1');
    } finally {
      await rig.close();
    }
  },
);

test(
  'a payment worker held up at start: the main thread keeps extending the start timeout, READY waits for it',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const sink = await startNotifySink();
    t.after(() => sink.close());
    const rig = await rigUnder(sink);
    // A first run creates the ledger; then another process locks it, so the worker cannot open it.
    await rig.startAgent();
    await rig.stopAgent('SIGTERM');
    const lock = new Database(`${rig.dir}/ledger.sqlite`);
    t.after(() => lock.open && lock.close());
    lock.exec('BEGIN EXCLUSIVE');
    try {
      const before = sink.messages().length;
      const fresh = () => sink.messages().slice(before);
      const enabled = rig.nextCommand(
        (c) => c.kind === 'enable' && c.enabled,
        20_000,
        'the reader to be enabled (C,1)',
      );
      const agent = await rig.startAgentProcessOnly();
      await enabled;
      await until(
        () => fresh().filter((m) => m.startsWith('WATCHDOG=1 EXTEND_TIMEOUT_USEC=')).length >= 3,
        20_000,
        'three pings extending the start timeout',
      );
      assert.ok(
        !agent.logs.some((l) => l.msg === 'payment worker ready'),
        'the worker was not held up: the test proves nothing',
      );
      assert.ok(
        !fresh().some((m) => m.startsWith('READY=1')),
        `READY before the payment worker was ready: ${JSON.stringify(fresh())}`,
      );
      lock.exec('ROLLBACK');
      lock.close();
      await agent.waitForLog((l) => l.msg === 'payment worker ready', 30_000, 'the payment worker to be ready');
      await until(() => fresh().some((m) => m.startsWith('READY=1')), 10_000, 'READY=1 once the worker is ready');
    } finally {
      await rig.close();
    }
  },
);
