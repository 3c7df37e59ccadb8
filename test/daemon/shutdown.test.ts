/**
 * Graceful shutdown of the real daemon process (docs/decisions/field-operations.md item 2): on SIGTERM no new session
 * starts, the vend in progress finishes (or is failed cleanly), the session is settled, the
 * ledger is closed, and the process exits 0 well within the unit's stop timeout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRig, until } from '../../rigs/rig.js';
import { inspectLedger } from '../../src/ledger/index.js';
import { join } from 'node:path';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test('SIGTERM during a vend: the vend finishes, the session is settled, exit 0', T, async () => {
  const rig = await createRig({ vmc: { vendPolicy: 'manual' } });
  try {
    const agent = await rig.startAgent();
    const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
    const start = await rig.start();
    assert.equal(start.outcome.kind, 'approved');
    await opened;
    const approved = rig.nextCommand((c) => c.kind === 'vend-approve', 5000, 'vend approval');
    rig.vmc.select(5, 2.5);
    await approved;

    // The vend is being dispensed when the stop arrives: the agent must wait for its outcome.
    // C,0 is also the first command at link-up: only what the board hears after SIGTERM counts.
    const beforeStop = rig.vmc.received().length;
    agent.child.kill('SIGTERM');
    await agent.waitForLog((l) => l.msg === 'stopping', 5000, 'the stop to begin');
    rig.vmc.vendSuccess();
    const exit = await agent.exited;
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(
      agent.logs.some((l) => l.msg === 'payment worker stopped'),
      'the payment worker closed the ledger',
    );
    const afterStop = rig.vmc.received().slice(beforeStop);
    const heard = `after SIGTERM the board heard ${afterStop.join(' | ')}`;
    assert.equal(afterStop.at(-1), 'C,0', `the reader was disabled last, before exit; ${heard}`);
    assert.ok(afterStop.includes('C,STOP'), `the session was ended once the vend finished; ${heard}`);

    // The session's Settlement was written before exit; it is delivered (now or after restart).
    await rig.startAgent();
    await until(
      () => rig.gateway.ledger().transactions[start.transactionId]?.state === 'settled',
      10_000,
      'the Settlement',
    );
    assert.equal(rig.gateway.ledger().transactions[start.transactionId]?.settlement?.amount, 2.5);
    await rig.stopAgent('SIGTERM');
    const ledger = inspectLedger(join(rig.dir, 'ledger.sqlite'));
    assert.equal(ledger.integrity, 'ok');
    assert.equal(ledger.pending, 0);
  } finally {
    await rig.close();
  }
});

test('SIGTERM refuses new sessions: a Start during the stop is declined, nothing is authorized', T, async () => {
  const rig = await createRig({ vmc: { vendPolicy: 'manual' } });
  try {
    const agent = await rig.startAgent();
    const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
    const first = await rig.start();
    await opened;
    const approved = rig.nextCommand((c) => c.kind === 'vend-approve', 5000, 'vend approval');
    rig.vmc.select(5, 1);
    await approved;
    agent.child.kill('SIGTERM');
    await agent.waitForLog((l) => l.msg === 'stopping', 5000, 'the stop to begin');
    const second = await rig.start();
    assert.equal(second.outcome.kind, 'declined');
    rig.vmc.vendFailure(3);
    assert.deepEqual(await agent.exited, { code: 0, signal: null });
    assert.equal(
      rig.gateway.ledger().transactions[second.transactionId],
      undefined,
      'no Authorization for the refused Start',
    );
    // Nothing sold in the first session: it is cancelled, not settled.
    await rig.startAgent();
    await until(
      () => rig.gateway.ledger().transactions[first.transactionId]?.state === 'cancelled',
      10_000,
      'the Cancel',
    );
  } finally {
    await rig.close();
  }
});
