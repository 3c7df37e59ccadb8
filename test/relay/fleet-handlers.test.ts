/** The canned `start` the fleet simulation's machines use to answer relayed Starts. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handlers } from '../../rigs/relay/fleet-handlers.js';

test(
  'canned start: Approved with the TransactionId echoed; late TOO_LATE; bad args BAD_ARGS',
  { timeout: 5_000 },
  () => {
    const start = handlers['start']!;
    const ok = start({
      integratorName: 'w',
      body: JSON.stringify({ TransactionId: 'tx-00000001' }),
      deadlineAt: Date.now() + 5_000,
      client: '127.0.0.1',
    });
    assert.ok(ok.ok);
    const result = ok.result as { httpStatus: number; body: string };
    assert.equal(result.httpStatus, 200);
    assert.deepEqual(JSON.parse(result.body), { Status: { Verdict: 'Approved' }, TransactionId: 'tx-00000001' });
    const late = start({ integratorName: 'w', body: '{}', deadlineAt: Date.now() - 1, client: '127.0.0.1' });
    assert.equal(!late.ok && late.code, 'TOO_LATE');
    const bad = start({ body: 5 });
    assert.equal(!bad.ok && bad.code, 'BAD_ARGS');
  },
);

test('canned start.confirm: taken when well formed', { timeout: 5_000 }, () => {
  const confirm = handlers['start.confirm']!;
  assert.ok(confirm({ txId: 'tx-00000001', startNonce: 'n'.repeat(22) }).ok);
  assert.equal(confirm({ txId: 5 }).ok, false);
});
