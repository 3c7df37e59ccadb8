/**
 * The in-process rig (rigs/in-process-rig.ts) stands the real daemon wiring where the process rig
 * stands `qrvend run`: every thread's log lines come back (the payment worker's from its own
 * thread), a Start is approved and opens a session on the VMC over the in-memory wire, the daemon
 * stops as `qrvend run` does on SIGTERM with its log read to the end, starts again on the same
 * ledger, and close() leaves no scratch directory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { createInProcessRig } from '../../rigs/in-process-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

test(
  'the daemon in this process: every thread logs back, a sale opens a session, a stop and a restart, nothing left',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const rig = await createInProcessRig({ vmc: { vendPolicy: 'manual' } });
    const dir = rig.dir;
    try {
      const agent = await rig.startAgent();
      const ready = await agent.waitForLog((l) => l.msg === 'payment worker ready', 1000, 'the ready line');
      assert.notEqual(ready.thread, threadId, 'the payment worker logs from its own thread');
      assert.ok(
        agent.logs.some((l) => l.thread === threadId),
        'the main thread (the machine loop) logs to the same place',
      );
      assert.match(agent.startOrigin ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);

      const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
      const start = await rig.start();
      assert.equal(start.outcome.kind, 'approved', JSON.stringify(start.outcome));
      await opened;
      assert.ok(rig.vmc.cancel(), 'the VMC cancels the session it was given');
      await agent.waitForLog(
        (l) => l.txId === start.transactionId && String(l.msg).startsWith('static session cancelled'),
        10_000,
        'the session to be cancelled',
      );

      const stopped = await rig.stopAgent();
      assert.deepEqual(stopped, { code: 0, signal: null });
      assert.ok(
        agent.logs.some((l) => l.msg === 'stopped'),
        'the last line of the stop was read before exited settled',
      );
      assert.equal(rig.agent, null);

      const again = await rig.startAgent();
      assert.notEqual(again, agent, 'a new run of the daemon, with its own log');
      assert.equal(
        again.logs.some((l) => l.msg === 'stopped'),
        false,
      );
    } finally {
      await rig.close();
    }
    assert.equal(existsSync(dir), false, 'the scratch directory is gone');
  },
);
