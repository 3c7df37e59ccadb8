/**
 * A vend the VMC was approved for, whose result the daemon never heard, is a sale (MDB 4.2 7.4.7:
 * "A reset between VEND APPROVED and VEND SUCCESS shall be interpreted as a VEND SUCCESS";
 * docs/decisions/sales-and-recovery.md). Through the real daemon: it approves a vend (C,VEND seen
 * by the VMC simulator), is SIGKILLed before any result, the VMC dispenses while no reader runs,
 * and the next start charges the vend from the vend journal's approval record, exactly once; a
 * second restart charges nothing more.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { statSync } from 'node:fs';
import { createRig, until } from '../../rigs/rig.js';
import { readAgentOutbox, readAgentTransactions } from '../../rigs/chaos/agent-ledger.js';
import { assertLedgerClean, assertSalesBalance, waitTx } from './support/e2e-rig.js';
import { openSession, select } from './support/static-session.js';
import { selectAndPay } from './support/dynamic-payment.js';
import { APPROVAL_CHARGED_LOG as CHARGED_LOG } from '../../src/ledger/vend-journal-takeover.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test('static QR: SIGKILL after C,VEND reached the VMC, before its result: charged at the next start', T, async () => {
  const rig = await createRig({ vmc: { vendPolicy: 'manual' } });
  try {
    await rig.startAgent(20_000);
    const session = await openSession(rig);
    // The VMC has the approval.
    assert.deepEqual(await select(rig, 12, 1.5), { kind: 'vend-approve', amount: 1.5 });
    await rig.stopAgent('SIGKILL');
    assert.ok(rig.vmc.vendSuccess(), 'the VMC dispenses while no reader runs: nobody hears the result');

    const agent = await rig.startAgent(30_000);
    const closed = (t: { state: string }) => t.state === 'settled' || t.state === 'cancelled';
    const settled = await waitTx(rig, session.txId, closed, 'recovery to close the session', 30_000);
    assert.equal(settled.state, 'settled', `the approved vend was charged (${JSON.stringify(settled.accepted)})`);
    assert.equal(settled.settlement?.amount, 1.5);
    assert.deepEqual([settled.accepted.Settlement, settled.accepted.Cancel, settled.accepted.Void], [1, 0, 0]);
    assert.equal(agent.logs.filter((l) => l.msg === CHARGED_LOG).length, 1);
    const journal = join(rig.dir, 'ledger.sqlite.vend-journal');
    await until(() => statSync(journal).size === 0, 10_000, 'the journal taken over and cut back');

    // A second restart finds nothing left to charge.
    await rig.stopAgent('SIGKILL');
    const again = await rig.startAgent(30_000);
    await until(() => readAgentOutbox(join(rig.dir, 'ledger.sqlite')).pending === 0, 20_000, 'the outbox to drain');
    assert.equal(again.logs.filter((l) => l.msg === CHARGED_LOG).length, 0);
    const atGateway = rig.gateway.ledger().transactions[session.txId];
    const closings = [atGateway?.accepted.Settlement, atGateway?.accepted.Cancel];
    assert.deepEqual(closings, [1, 0], 'still settled exactly once');
    assertLedgerClean(rig);
    assertSalesBalance(rig);
  } finally {
    await rig.close();
  }
});

test('dynamic QR: SIGKILL after C,VEND reached the VMC, before its result: sold, no Void, twice over', T, async () => {
  const rig = await createRig({ vmc: { vendPolicy: 'manual' }, config: { mdb: { alwaysIdle: true } } });
  try {
    await rig.startAgent(20_000);
    const pay = await selectAndPay(rig, 7, 1); // 1.00: the gateway simulator pays at once
    assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1 });
    await rig.stopAgent('SIGKILL');
    assert.ok(rig.vmc.vendSuccess(), 'the VMC dispenses while no reader runs');

    const ledger = join(rig.dir, 'ledger.sqlite');
    for (let start = 1; start <= 2; start++) {
      await rig.startAgent(30_000);
      await until(() => readAgentOutbox(ledger).pending === 0, 20_000, 'the outbox to drain');
      const kept = readAgentTransactions(ledger).find((t) => t.txId === pay.txId);
      assert.equal(kept?.state, 'vended', `start ${start}: the ledger holds the vend as sold`);
      const paid = rig.gateway.ledger().transactions[pay.txId];
      assert.equal(paid?.state, 'paid', `start ${start}: the vend stays paid (${JSON.stringify(paid?.accepted)})`);
      assert.equal(paid?.accepted.Void, 0, `start ${start}: no Void for a vend the VMC was approved for`);
      await rig.stopAgent('SIGKILL');
    }
    assertLedgerClean(rig);
    assertSalesBalance(rig);
  } finally {
    await rig.close();
  }
});
