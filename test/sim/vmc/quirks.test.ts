/**
 * The simulator's quirks (src/sim/vmc/quirks.ts) and their script commands. What the agent makes
 * of them is tested end to end in test/e2e/vmc-money.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBoardLine } from '../../../src/mdb/codec/index.js';
import type { ByteLink } from '../../../src/mdb/transport/index.js';
import { parseStep, runStep, VmcSimulator } from '../../../src/sim/vmc/index.js';

test('script: cash-sale <item> <price> and inactive parse; bad arguments are refused', () => {
  assert.deepEqual(parseStep('cash-sale 12 1.15'), { op: 'cash-sale', item: 12, price: 1.15 });
  assert.deepEqual(parseStep('inactive'), { op: 'inactive' });
  assert.throws(() => parseStep('cash-sale 12'), /takes 2 arguments/);
  assert.throws(() => parseStep('inactive now'), /takes 0 arguments/);
});

test("cash-sale puts the board's cash-sale line on the wire; inactive resets the simulated reader", async () => {
  let wire = '';
  const link: ByteLink = {
    description: 'test',
    write: (data) => void (wire += data.toString()),
    onData: () => {},
    onClose: () => {},
    drain: async () => {},
    close: async () => {},
  };
  const sim = new VmcSimulator({ link, pollIntervalMs: 60_000 });
  try {
    await runStep(sim, parseStep('cash-sale 21 4.35')!);
    await runStep(sim, parseStep('inactive')!);
    const lines = wire.split('\r\n').filter((l) => l !== '');
    assert.deepEqual(lines.slice(0, 2), ['c,CASHSALE,4.35,21', 'c,STATUS,INACTIVE']);
    assert.deepEqual(parseBoardLine(lines[0]!), { ok: true, value: { kind: 'cash-sale', price: 4.35, item: 21 } });
    assert.equal(sim.state().reader, 'inactive');
  } finally {
    await sim.close();
  }
});
