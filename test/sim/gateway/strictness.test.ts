/**
 * A simulator that catches us (docs/decisions/money-conformance.md, item 9): it refuses what a strict gateway would, so
 * the
 * daemon's own tests fail when its requests drift. Real HTTP on loopback.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { paymentInfoFromGenerateQR } from '../../../src/gateway/envelope.js';
import { ReasonCodes } from '../../../src/gateway/protocol/index.js';
import { encodeRequest, RawJson } from '../../../src/gateway/wire/index.js';
import { startGatewaySimulator, type GatewaySimulator } from '../../../src/sim/gateway/index.js';
import { authorize, builders as b, closes, newTx, paymentInfoOf, post } from './helpers.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

describe('gateway simulator: strict by default', () => {
  let sim: GatewaySimulator;
  before(async () => {
    sim = await startGatewaySimulator();
  });
  after(() => sim.close());

  async function paidQr(amount: number) {
    const txId = newTx('strict');
    const products = [{ item: 3, price: amount }];
    const gen = await post(sim.url, 'GenerateQR', b.generateQR({ txId, amount, products }));
    const composed = paymentInfoFromGenerateQR(gen.json, amount, 2);
    const paid = await post(
      sim.url,
      'Inquiry',
      b.inquiry({ txId, amount, paymentInfo: composed, attempt: 1, isLast: false, products }),
    );
    assert.equal(paid.json.Status.Verdict, 'Approved', paid.text);
    return { txId, products, composed, approving: paymentInfoOf(paid) };
  }

  it('its answers write amounts with decimals: AuthAmount 5.00, not 5', T, async () => {
    const pi = await authorize(sim.url, newTx('strict'), 5);
    assert.match(pi.text, /"AuthAmount":5\.00,/);
  });

  it(
    'an Inquiry whose PaymentInfo differs from the issued QR in AuthAmount or by an added member is refused (998)',
    T,
    async () => {
      const txId = newTx('strict');
      const products = [{ item: 3, price: 7.77 }];
      const gen = await post(sim.url, 'GenerateQR', b.generateQR({ txId, amount: 7.77, products }));
      const { SrvTranId, RRN } = gen.json.QRData as { SrvTranId: string; RRN: string };
      const inquire = (pi: string) =>
        post(
          sim.url,
          'Inquiry',
          b.inquiry({ txId, amount: 7.77, paymentInfo: new RawJson(pi), attempt: 1, isLast: false, products }),
        );
      const ids = `"SrvTranId":${JSON.stringify(SrvTranId)},"RRN":${JSON.stringify(RRN)}`;
      const altered = await inquire(`{${ids},"AuthAmount":7.78}`);
      assert.deepEqual(
        [altered.json.Status.Code, altered.json.Status.StatusMessage],
        [998, 'PaymentInfo.AuthAmount must be the amount of the QR (7.77)'],
      );
      const added = await inquire(`{${ids},"AuthAmount":7.77,"AuthCode":"x"}`);
      assert.equal(added.json.Status.Code, 998);
      assert.match(added.json.Status.StatusMessage, /PaymentInfo\.AuthCode/);
      assert.equal(
        (await inquire(`{${ids},"AuthAmount":7.77}`)).json.Status.Code,
        993,
        'the composed PaymentInfo is accepted',
      );
    },
  );

  it(
    'a Void whose PaymentInfo differs by a single byte from the approving Inquiry (3.0 for 3.00) is refused',
    T,
    async () => {
      const { txId, approving } = await paidQr(3);
      const oneByteOff = new RawJson(approving.text.replace('"AuthAmount":3.00', '"AuthAmount":3.0'));
      assert.notEqual(oneByteOff.text, approving.text);
      const v = await post(
        sim.url,
        'Void',
        b.void({ txId, amount: 3, paymentInfo: oneByteOff, reasonCode: ReasonCodes.CancelledByMachine, ...closes }),
      );
      assert.equal(v.json.Status.Code, 998);
      const ok = await post(
        sim.url,
        'Void',
        b.void({ txId, amount: 3, paymentInfo: approving, reasonCode: ReasonCodes.CancelledByMachine, ...closes }),
      );
      assert.equal(ok.json.Status.Verdict, 'Approved', ok.text);
    },
  );

  it(
    'a member the interface does not define (a misspelt "Product" in a Settlement) is a 998 naming it',
    T,
    async () => {
      const txId = newTx('strict');
      const pi = await authorize(sim.url, txId);
      const body = {
        ...b.settlement({ txId, amount: 1.5, paymentInfo: pi, products: [{ item: 1, price: 1.5 }], ...closes }),
        Product: [],
      };
      const r = await post(sim.url, 'Settlement', body);
      assert.deepEqual(
        [r.json.Status.Code, r.json.Status.StatusMessage],
        [998, 'Product is not a member the interface defines'],
      );
      const nested = await post(sim.url, 'Authorization', {
        ...b.authorization({ txId: newTx('strict'), amount: 1 }),
        MachineInfo: { ...b.machineInfo(), Colour: 'red' },
      });
      assert.equal(nested.json.Status.StatusMessage, 'MachineInfo.Colour is not a member the interface defines');
      assert.equal(sim.ledger().rejected.at(-1)?.member, 'MachineInfo.Colour');
    },
  );

  it('a corrected Settlement after a final decline (998) is judged on its own body', T, async () => {
    const txId = newTx('strict');
    const pi = await authorize(sim.url, txId);
    const wrong = await post(
      sim.url,
      'Settlement',
      b.settlement({ txId, amount: 1, paymentInfo: new RawJson('{}'), products: [], ...closes }),
    );
    assert.equal(wrong.json.Status.Code, 998);
    const corrected = await post(
      sim.url,
      'Settlement',
      b.settlement({ txId, amount: 1, paymentInfo: pi, products: [], ...closes }),
    );
    assert.equal(corrected.json.Status.Verdict, 'Approved', corrected.text);
    // Once one was processed, another body is a conflict again.
    const other = await post(
      sim.url,
      'Settlement',
      b.settlement({ txId, amount: 2, paymentInfo: pi, products: [], ...closes }),
    );
    assert.equal(other.json.Status.Code, 9);
    const rec = sim.ledger().transactions[txId]!;
    assert.deepEqual([rec.state, rec.accepted.Settlement, rec.conflicts.length], ['settled', 1, 1]);
  });

  it(
    'it will not be told to answer Declined with Code 0: the control endpoint and the API refuse such a rule',
    T,
    async () => {
      const res = await fetch(`${sim.url}/_sim/control`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules: [{ op: 'Settlement', behaviour: { kind: 'decline', code: 0 } }] }),
      });
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { error: string }).error, /rules\[0\]\.behaviour\.code/);
      assert.throws(
        () => sim.addRules([{ op: 'Inquiry', behaviour: { kind: 'decline-at-inquiry', code: 0 } }]),
        /decline code/,
      );
      // Declines it does send mirror Code in CustomDeclineCode.
      const declined = await post(sim.url, 'Authorization', b.authorization({ txId: newTx('strict'), amount: 9.05 }));
      assert.deepEqual([declined.json.Status.Code, declined.json.Status.CustomDeclineCode], [5, 5]);
    },
  );

  it('a StatusMessage is cut at a code point, counted in UTF-16 units (never a lone surrogate)', T, async () => {
    const key = `${'a'.repeat(253)}\u{1F600}x`;
    const r = await post(
      sim.url,
      'Authorization',
      `${encodeRequest(b.authorization({ txId: newTx('strict'), amount: 1 })).slice(0, -1)},${JSON.stringify(key)}:1}`,
    );
    const message = r.json.Status.StatusMessage as string;
    assert.ok(message.length <= 255, String(message.length));
    assert.equal(message, `${'a'.repeat(253)}…`, 'the emoji does not fit whole: it is left out');
    assert.doesNotMatch(message, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });
});

describe('gateway simulator: --lenient', () => {
  let sim: GatewaySimulator;
  before(async () => {
    sim = await startGatewaySimulator({ lenient: true });
  });
  after(() => sim.close());

  it('accepts and drops members the interface does not define, as before', T, async () => {
    const txId = newTx('lenient');
    const pi = await authorize(sim.url, txId);
    const body = {
      ...b.settlement({ txId, amount: 1.5, paymentInfo: pi, products: [{ item: 1, price: 1.5 }], ...closes }),
      Product: [],
    };
    const r = await post(sim.url, 'Settlement', body);
    assert.equal(r.json.Status.Verdict, 'Approved', r.text);
  });
});
