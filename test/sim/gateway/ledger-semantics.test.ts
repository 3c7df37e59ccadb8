/**
 * The simulator's ledger: idempotent repeats, conflicting bodies, "settled or cancelled exactly
 * once", and the semantic checks a real gateway makes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { paymentInfoFromGenerateQR } from '../../../src/gateway/envelope.js';
import { encodeRequest, GATEWAY_TIMEOUT_PAYMENT_INFO } from '../../../src/gateway/wire/index.js';
import { ReasonCodes } from '../../../src/gateway/protocol/index.js';
import { startGatewaySimulator, type GatewaySimulator } from '../../../src/sim/gateway/index.js';
import { RawJson } from '../../../src/gateway/wire/index.js';
import { authorize, builders as b, closes, newTx, paymentInfoOf, post } from './helpers.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const EMPTY = new RawJson('{}');
const TIMEOUT_PI = new RawJson('{"IsGatewayTimeout":true}');

const T = { timeout: TEST_DEADLINE_MS };

describe('gateway simulator: static QR ledger', () => {
  let sim: GatewaySimulator;
  before(async () => {
    sim = await startGatewaySimulator();
  });
  after(() => sim.close());

  it('a repeated identical Settlement gets the same bytes and counts as a duplicate', T, async () => {
    const txId = newTx();
    const pi = await authorize(sim.url, txId);
    const body = encodeRequest(
      b.settlement({ txId, amount: 2, paymentInfo: pi, products: [{ item: 1, price: 2 }], ...closes }),
    );
    const first = await post(sim.url, 'Settlement', body);
    const second = await post(sim.url, 'Settlement', body);
    assert.equal(first.json.Status.Verdict, 'Approved');
    assert.equal(second.text, first.text);
    const rec = sim.ledger().transactions[txId]!;
    assert.deepEqual(
      [rec.state, rec.accepted.Settlement, rec.duplicates.Settlement, rec.conflicts.length],
      ['settled', 1, 1, 0],
    );
  });

  it('a different Settlement body for the same transaction is a conflict, declined and flagged', T, async () => {
    const txId = newTx();
    const pi = await authorize(sim.url, txId);
    await post(sim.url, 'Settlement', b.settlement({ txId, amount: 2, paymentInfo: pi, products: [], ...closes }));
    const other = await post(
      sim.url,
      'Settlement',
      b.settlement({ txId, amount: 3, paymentInfo: pi, products: [], ...closes }),
    );
    assert.equal(other.json.Status.Verdict, 'Declined');
    assert.equal(other.json.Status.Code, 9);
    const view = sim.ledger();
    const rec = view.transactions[txId]!;
    assert.equal(rec.accepted.Settlement, 1);
    assert.equal(rec.conflicts[0]?.op, 'Settlement');
    assert.ok(view.summary.conflicts >= 1);
  });

  it('Settlement and Cancel for one transaction: the second is declined and flagged', T, async () => {
    const txId = newTx();
    const pi = await authorize(sim.url, txId);
    assert.equal(
      (await post(sim.url, 'Settlement', b.settlement({ txId, amount: 1, paymentInfo: pi, products: [], ...closes })))
        .json.Status.Verdict,
      'Approved',
    );
    const cancel = await post(
      sim.url,
      'Cancel',
      b.cancel({ txId, amount: 5, paymentInfo: pi, reasonCode: ReasonCodes.CancelledByConsumer, ...closes }),
    );
    assert.deepEqual([cancel.json.Status.Verdict, cancel.json.Status.Code], ['Declined', 9]);
    const tx2 = newTx();
    const pi2 = await authorize(sim.url, tx2);
    await post(
      sim.url,
      'Cancel',
      b.cancel({ txId: tx2, amount: 5, paymentInfo: pi2, reasonCode: ReasonCodes.CancelledByConsumer, ...closes }),
    );
    const settle = await post(
      sim.url,
      'Settlement',
      b.settlement({ txId: tx2, amount: 1, paymentInfo: pi2, products: [], ...closes }),
    );
    assert.deepEqual([settle.json.Status.Verdict, settle.json.Status.Code], ['Declined', 9]);
    const view = sim.ledger();
    for (const id of [txId, tx2]) {
      const rec = view.transactions[id]!;
      assert.equal(rec.accepted.Settlement + rec.accepted.Cancel, 1, `${id} closed exactly once`);
      assert.equal(rec.conflicts.length, 1);
    }
    assert.equal(view.summary.closedMoreThanOnce.length, 0);
  });

  it(
    'semantic declines: unknown transaction, above AuthAmount, ' +
      'products total, altered PaymentInfo, declined authorization',
    T,
    async () => {
      const unknown = await post(
        sim.url,
        'Settlement',
        b.settlement({ txId: newTx(), amount: 1, paymentInfo: EMPTY, products: [], ...closes }),
      );
      assert.equal(unknown.json.Status.Code, 2);

      const txId = newTx();
      const pi = await authorize(sim.url, txId, 5);
      const above = await post(
        sim.url,
        'Settlement',
        b.settlement({ txId, amount: 5.5, paymentInfo: pi, products: [], ...closes }),
      );
      assert.equal(above.json.Status.Code, 4);

      const tx2 = newTx();
      const pi2 = await authorize(sim.url, tx2, 5);
      const mismatch = await post(
        sim.url,
        'Settlement',
        b.settlement({ txId: tx2, amount: 3, paymentInfo: pi2, products: [{ item: 1, price: 1 }], ...closes }),
      );
      assert.equal(mismatch.json.Status.Code, 7);

      const tx3 = newTx();
      const pi3 = await authorize(sim.url, tx3, 5);
      const altered = await post(
        sim.url,
        'Settlement',
        b.settlement({
          txId: tx3,
          amount: 1,
          paymentInfo: new RawJson(pi3.text.replace(/\}$/, ',"SettAmount":1.00}')),
          products: [],
          ...closes,
        }),
      );
      assert.equal(altered.json.Status.Code, 998);
      assert.match(altered.json.Status.StatusMessage, /PaymentInfo/);

      const tx4 = newTx();
      const declined = await post(sim.url, 'Authorization', b.authorization({ txId: tx4, amount: 9.01 }));
      assert.equal(declined.json.Status.Code, 1);
      const settleDeclined = await post(
        sim.url,
        'Settlement',
        b.settlement({ txId: tx4, amount: 1, paymentInfo: EMPTY, products: [], ...closes }),
      );
      assert.equal(settleDeclined.json.Status.Code, 9);
      assert.equal(sim.ledger().transactions[tx4]?.state, 'auth-declined');
    },
  );

  it('a Settlement without BasicInfo.Amount is declined with code 10 (seed, Errors 4)', T, async () => {
    const body = b.settlement({ txId: newTx(), amount: 1, paymentInfo: EMPTY, products: [], ...closes }) as unknown as {
      BasicInfo: Record<string, unknown>;
    };
    delete body.BasicInfo.Amount;
    const r = await post(sim.url, 'Settlement', body);
    assert.deepEqual([r.json.Status.Code, r.json.Status.CustomDeclineCode], [10, 10]);
    assert.match(r.json.Status.StatusMessage, /amount/i);
  });

  it('Cancel with IsGatewayTimeout: accepted for an authorization never seen and for one seen', T, async () => {
    const unseen = newTx();
    const r1 = await post(
      sim.url,
      'Cancel',
      b.cancel({ txId: unseen, amount: 5, paymentInfo: TIMEOUT_PI, reasonCode: 0, ...closes }),
    );
    assert.equal(r1.json.Status.Verdict, 'Approved');
    const seen = newTx();
    await authorize(sim.url, seen);
    const r2 = await post(
      sim.url,
      'Cancel',
      b.cancel({ txId: seen, amount: 5, paymentInfo: TIMEOUT_PI, reasonCode: 0, ...closes }),
    );
    assert.equal(r2.json.Status.Verdict, 'Approved');
    const view = sim.ledger();
    assert.equal(view.transactions[unseen]?.state, 'cancelled');
    assert.equal(view.transactions[seen]?.cancel?.gatewayTimeout, true);
    assert.ok(!view.summary.openAuthorizations.includes(seen));
  });

  it('a retryable decline is not pinned: the same body retried is processed again', T, async () => {
    const txId = newTx();
    const pi = await authorize(sim.url, txId);
    sim.addRules([{ op: 'Settlement', transactionId: txId, times: 1, behaviour: { kind: 'decline', code: 6 } }]);
    const body = encodeRequest(b.settlement({ txId, amount: 1, paymentInfo: pi, products: [], ...closes }));
    assert.equal((await post(sim.url, 'Settlement', body)).json.Status.Code, 6);
    assert.equal((await post(sim.url, 'Settlement', body)).json.Status.Verdict, 'Approved');
    const rec = sim.ledger().transactions[txId]!;
    assert.deepEqual([rec.accepted.Settlement, rec.duplicates.Settlement, rec.requests.Settlement], [1, 0, 2]);
  });

  it('the summary lists authorizations still open', T, async () => {
    const txId = newTx();
    await authorize(sim.url, txId);
    assert.ok(sim.ledger().summary.openAuthorizations.includes(txId));
  });

  it('an Authorization for a TransactionId already used is declined', T, async () => {
    const txId = newTx();
    await authorize(sim.url, txId);
    const again = await post(sim.url, 'Authorization', b.authorization({ txId, amount: 5 }));
    assert.equal(again.json.Status.Code, 9);
  });
});

describe('gateway simulator: dynamic QR ledger', () => {
  let sim: GatewaySimulator;
  let clock = new Date(2026, 0, 1, 12, 0, 0).getTime();
  before(async () => {
    sim = await startGatewaySimulator({ now: () => new Date(clock) });
  });
  after(() => sim.close());

  async function generate(amount: number, txId = newTx('qr')) {
    const products = [{ item: 3, price: amount }];
    const r = await post(sim.url, 'GenerateQR', b.generateQR({ txId, amount, products }));
    return { txId, products, r, pi: paymentInfoFromGenerateQR(r.json, amount, 2) };
  }
  const inquire = (txId: string, amount: number, pi: RawJson, attempt: number, isLast = false) =>
    post(
      sim.url,
      'Inquiry',
      b.inquiry({ txId, amount, paymentInfo: pi, attempt, isLast, products: [{ item: 3, price: amount }] }),
    );

  it('Void of an unpaid QR succeeds (nothing was taken) and closes the QR', T, async () => {
    const { txId, pi } = await generate(7.77); // never paid
    const v = await post(sim.url, 'Void', b.void({ txId, amount: 7.77, paymentInfo: pi, reasonCode: 3, ...closes }));
    assert.equal(v.json.Status.Verdict, 'Approved');
    assert.equal(sim.ledger().transactions[txId]?.state, 'expired');
    assert.equal((await inquire(txId, 7.77, pi, 1)).json.Status.Code, 992);
  });

  it('never paid: pending until the last polling, then expired (992)', T, async () => {
    const { txId, pi } = await generate(7.77);
    assert.equal((await inquire(txId, 7.77, pi, 1)).json.Status.Code, 993);
    assert.equal((await inquire(txId, 7.77, pi, 2, true)).json.Status.Code, 992);
    assert.equal(sim.ledger().transactions[txId]?.state, 'expired');
  });

  it('declined at the first Inquiry (8.CC) with a final code', T, async () => {
    const { txId, pi } = await generate(8.01);
    assert.equal((await inquire(txId, 8.01, pi, 1)).json.Status.Code, 1);
    assert.equal((await inquire(txId, 8.01, pi, 2)).json.Status.Code, 1);
    assert.equal(sim.ledger().transactions[txId]?.state, 'qr-declined');
  });

  it(
    'declined, then voided as an unknown outcome (IsGatewayTimeout): ' +
      'nothing was taken, the Void succeeds; a plain Void is still refused',
    T,
    async () => {
      const { txId, pi } = await generate(8.01);
      assert.equal((await inquire(txId, 8.01, pi, 1)).json.Status.Code, 1);
      const plain = await post(
        sim.url,
        'Void',
        b.void({ txId, amount: 8.01, paymentInfo: pi, reasonCode: 3, ...closes }),
      );
      assert.equal(plain.json.Status.Code, 9, 'a Void that claims a payment of a declined QR is not allowed');
      const unknown = await post(
        sim.url,
        'Void',
        b.void({ txId, amount: 8.01, paymentInfo: GATEWAY_TIMEOUT_PAYMENT_INFO, reasonCode: 3, ...closes }),
      );
      assert.equal(unknown.json.Status.Verdict, 'Approved');
      const rec = sim.ledger().transactions[txId]!;
      assert.deepEqual([rec.state, rec.accepted.Void], ['qr-declined', 1]);
    },
  );

  it('paid after a delay (runtime rule, injected clock)', T, async () => {
    const txId = newTx('qr');
    sim.addRules([{ op: 'GenerateQR', transactionId: txId, behaviour: { kind: 'pay-after-ms', ms: 30_000 } }]);
    const { pi } = await generate(2.5, txId);
    assert.equal((await inquire(txId, 2.5, pi, 1)).json.Status.Code, 993);
    clock += 30_000;
    const paid = await inquire(txId, 2.5, pi, 2);
    assert.equal(paid.json.Status.Verdict, 'Approved');
    assert.equal(paid.json.PaymentInfo.SrvTranId, JSON.parse(pi.text).SrvTranId);
    assert.equal(sim.ledger().transactions[txId]?.state, 'paid');
  });

  it(
    'Void of a paid QR: only with the approving Inquiry PaymentInfo; accepted once, repeated identically = duplicate',
    T,
    async () => {
      const { txId, pi } = await generate(3);
      const paid = await inquire(txId, 3, pi, 1);
      assert.equal(paid.json.Status.Verdict, 'Approved');
      // The PaymentInfo composed from GenerateQR is not the one that approved the payment.
      const composed = await post(
        sim.url,
        'Void',
        b.void({ txId, amount: 3, paymentInfo: pi, reasonCode: ReasonCodes.CancelledByMachine, ...closes }),
      );
      assert.equal(composed.json.Status.Code, 998);
      assert.match(composed.json.Status.StatusMessage, /approving Inquiry/);
      const body = encodeRequest(
        b.void({
          txId,
          amount: 3,
          paymentInfo: paymentInfoOf(paid),
          reasonCode: ReasonCodes.CancelledByMachine,
          ...closes,
        }),
      );
      const v1 = await post(sim.url, 'Void', body);
      const v2 = await post(sim.url, 'Void', body);
      assert.equal(v1.json.Status.Verdict, 'Approved');
      assert.equal(v2.text, v1.text);
      const rec = sim.ledger().transactions[txId]!;
      assert.deepEqual([rec.state, rec.accepted.Void, rec.duplicates.Void], ['voided', 1, 1]);
    },
  );

  it('an Inquiry whose PaymentInfo does not name the QR is refused', T, async () => {
    const { txId } = await generate(3);
    const r = await inquire(txId, 3, new RawJson('{"SrvTranId":"other","RRN":"x","AuthAmount":3.00}'), 1);
    assert.equal(r.json.Status.Code, 998);
  });

  it('GenerateQR 9.CC is declined with code CC', T, async () => {
    const { r } = await generate(9.04);
    assert.deepEqual([r.json.Status.Verdict, r.json.Status.Code], ['Declined', 4]);
  });
});
