/**
 * End to end: the real daemon process over a socat pty and the gateway simulator on loopback.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRig, until, type Rig } from '../../src/sim/rig.js';
import { checkSales } from '../../src/sim/checker.js';

let rig: Rig;
const T = { timeout: 30_000 };

before(async () => {
  rig = await createRig({ vmc: { vendPolicy: 'manual' } });
  await rig.startAgent();
});
after(async () => rig?.close());

test('static QR: Start, authorization, two vends approved locally, one Settlement for both', T, async () => {
  const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
  const start = await rig.start();
  assert.equal(start.outcome.kind, 'approved');
  const cmd = await opened;
  assert.deepEqual(cmd, { kind: 'start', funds: 10 });
  for (const [item, price] of [[12, 1.5], [7, 2]] as const) {
    const answer = rig.nextCommand((c) => c.kind === 'vend-approve' || c.kind === 'vend-deny', 5000, 'vend answer');
    rig.vmc.select(item, price);
    assert.deepEqual(await answer, { kind: 'vend-approve', amount: price });
    rig.vmc.vendSuccess();
  }
  rig.vmc.endSession();
  await until(() => rig.gateway.ledger().transactions[start.transactionId]?.state === 'settled', 10_000, 'the Settlement');
  const tx = rig.gateway.ledger().transactions[start.transactionId]!;
  assert.equal(tx.settlement?.amount, 3.5);
  assert.equal(tx.settlement?.products, 2);
  assert.equal(tx.accepted.Settlement, 1);
  const check = checkSales(rig.vmc.records(), rig.gateway.ledger());
  assert.ok(check.ok, JSON.stringify(check));
});
