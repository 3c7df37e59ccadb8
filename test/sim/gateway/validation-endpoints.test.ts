/**
 * Strict validation on every operation (998/997 naming the member), the HTTP edges (media type,
 * unknown path, method), the read-only ledger and the control endpoint, and a bounded fuzz run:
 * whatever arrives, the simulator answers with a response valid against the operation's schema.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RawJson } from '../../../src/gateway/wire/index.js';
import { GATEWAY_OPERATIONS, validateResponse, validateRequest } from '../../../src/gateway/protocol/index.js';
import { startGatewaySimulator, type GatewaySimulator } from '../../../src/sim/gateway/index.js';
import { builders as b, closes, newTx, post } from './helpers.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const EMPTY = new RawJson('{}');

const T = { timeout: TEST_DEADLINE_MS };

describe('gateway simulator: validation and endpoints', () => {
  let sim: GatewaySimulator;
  before(async () => {
    sim = await startGatewaySimulator();
  });
  after(() => sim.close());

  it('every operation declines a violation with 998 and a missing member with 997, naming it', T, async () => {
    const pi = new RawJson('{"SrvTranId":"S","RRN":"R","AuthAmount":1.00}');
    const bodies = {
      Authorization: b.authorization({ txId: newTx(), amount: 1 }),
      Settlement: b.settlement({ txId: newTx(), amount: 1, paymentInfo: pi, products: [], ...closes }),
      Cancel: b.cancel({ txId: newTx(), amount: 1, paymentInfo: pi, reasonCode: 2, ...closes }),
      GenerateQR: b.generateQR({ txId: newTx(), amount: 1, products: [] }),
      Inquiry: b.inquiry({ txId: newTx(), amount: 1, paymentInfo: pi, attempt: 1, isLast: false, products: [] }),
      Void: b.void({ txId: newTx(), amount: 1, paymentInfo: pi, reasonCode: 3, ...closes }),
    };
    for (const op of GATEWAY_OPERATIONS) {
      const tooLong = { ...bodies[op], MachineInfo: { ...bodies[op].MachineInfo, Type: 'x'.repeat(51) } };
      const r1 = await post(sim.url, op, tooLong);
      assert.equal(r1.status, 200);
      assert.deepEqual(
        [r1.json.Status.Verdict, r1.json.Status.Code, r1.json.Status.CustomDeclineCode],
        ['Declined', 998, 998],
        `${op}: ${r1.text}`,
      );
      assert.match(r1.json.Status.StatusMessage, /MachineInfo\.Type/);
      const missing = { ...bodies[op], BasicInfo: { ...bodies[op].BasicInfo, CurrencyNumeric: undefined } };
      const r2 = await post(sim.url, op, missing);
      assert.equal(r2.json.Status.Code, 997, `${op}: ${r2.text}`);
      assert.match(r2.json.Status.StatusMessage, /BasicInfo\.CurrencyNumeric/);
      assert.equal(validateResponse(op, r1.json).ok, true, `${op}: the decline itself is schema-valid`);
    }
    const view = sim.ledger();
    assert.ok(view.summary.rejected >= 12);
    assert.equal(view.rejected.at(-1)?.member, 'BasicInfo.CurrencyNumeric');
  });

  it('closed request objects: an extra member is a 998', T, async () => {
    const body = {
      ...b.cancel({ txId: newTx(), amount: 1, paymentInfo: EMPTY, reasonCode: 2, ...closes }),
      Extra: true,
    };
    const r = await post(sim.url, 'Cancel', body);
    assert.deepEqual([r.json.Status.Code, r.json.Status.StatusMessage], [998, 'Extra is not an allowed member']);
  });

  it('a body that is not JSON is a 998; a wrong media type is HTTP 415; all JSON media types pass', T, async () => {
    const r = await post(sim.url, 'Authorization', '{not json');
    assert.deepEqual([r.status, r.json.Status.Code], [200, 998]);
    assert.equal(
      (await post(sim.url, 'Authorization', b.authorization({ txId: newTx(), amount: 1 }), 'text/plain')).status,
      415,
    );
    for (const type of ['text/json', 'application/vnd.gateway+json', 'application/json; charset=utf-8']) {
      const ok = await post(sim.url, 'Authorization', b.authorization({ txId: newTx(), amount: 1 }), type);
      assert.equal(ok.json.Status.Verdict, 'Approved', type);
    }
  });

  it(
    'unknown path 404, wrong method 405, wrong media type 415: each answer carries a Status; ledger read-only',
    T,
    async () => {
      const notFound = await fetch(`${sim.url}/Gateway/StaticQR/Sale`, { method: 'POST' });
      const wrongMethod = await fetch(`${sim.url}/Gateway/StaticQR/Authorization`);
      const wrongType = await post(
        sim.url,
        'Authorization',
        b.authorization({ txId: newTx(), amount: 1 }),
        'text/plain',
      );
      assert.deepEqual([notFound.status, wrongMethod.status, wrongType.status], [404, 405, 415]);
      for (const [what, body] of [
        ['404', await notFound.json()],
        ['405', await wrongMethod.json()],
        ['415', wrongType.json],
      ] as const) {
        const status = (body as { Status?: { Verdict?: string; Code?: number; CustomDeclineCode?: number } }).Status;
        assert.equal(status?.Verdict, 'Declined', `${what}: ${JSON.stringify(body)}`);
        assert.ok(
          status?.Code !== undefined && status.Code !== 0 && status.CustomDeclineCode === status.Code,
          `${what}: a decline code, mirrored`,
        );
        assert.equal(validateResponse('Authorization', body).ok, true, `${what}: a schema-valid answer`);
      }
      assert.equal((await fetch(`${sim.url}/_sim/ledger`, { method: 'POST', body: '{}' })).status, 405);
      const ledger = (await (await fetch(`${sim.url}/_sim/ledger`)).json()) as {
        summary?: unknown;
        transactions?: unknown;
      };
      assert.ok(ledger.summary && ledger.transactions);
    },
  );

  it(
    'POST /_sim/control sets rules, faults and resets the ledger; a bad command is a 400 naming the member',
    T,
    async () => {
      const control = (body: unknown) =>
        fetch(`${sim.url}/_sim/control`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const bad = await control({ faults: [{ kind: 'explode', rate: 1 }] });
      assert.equal(bad.status, 400);
      assert.match(((await bad.json()) as { error: string }).error, /faults\[0\]\.kind/);
      assert.equal((await control({ unknown: 1 })).status, 400);

      const txId = newTx();
      const ok = await control({
        rules: [{ op: 'Authorization', transactionId: txId, behaviour: { kind: 'decline', code: 3 } }],
        faults: [{ kind: 'http500', rate: 1, ops: ['Void'] }],
        seed: 7,
      });
      assert.equal(ok.status, 200);
      assert.equal((await post(sim.url, 'Authorization', b.authorization({ txId, amount: 1 }))).json.Status.Code, 3);
      assert.equal(
        (await post(sim.url, 'Void', b.void({ txId, amount: 1, paymentInfo: EMPTY, reasonCode: 3, ...closes }))).status,
        500,
      );
      const state = (await (await fetch(`${sim.url}/_sim/control`)).json()) as { faults: { kind: string }[] };
      assert.equal(state.faults[0]?.kind, 'http500');

      assert.equal((await control({ faults: [], rules: [], resetLedger: true })).status, 200);
      assert.equal(sim.ledger().summary.transactions, 0);
      assert.equal(sim.ledger().summary.rejected, 0);
    },
  );

  it('fuzz: any JSON body gets HTTP 200 and a schema-valid answer, never a crash', T, async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...GATEWAY_OPERATIONS), fc.jsonValue({ maxDepth: 4 }), async (op, body) => {
        assert.equal(validateRequest(op, body).ok || true, true); // the validator itself never throws
        const r = await post(sim.url, op, body);
        assert.equal(r.status, 200, r.text);
        assert.equal(validateResponse(op, r.json).ok, true, r.text);
      }),
      { numRuns: 150, seed: 20260305 },
    );
    // Mutations of valid bodies exercise the deeper rules.
    const base = b.settlement({
      txId: newTx(),
      amount: 1,
      paymentInfo: EMPTY,
      products: [{ item: 1, price: 1 }],
      ...closes,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('BasicInfo', 'MachineInfo', 'PaymentInfo', 'Products', 'ActorInfo', 'DeviceInfo'),
        fc.jsonValue({ maxDepth: 2 }),
        async (member, value) => {
          const r = await post(sim.url, 'Settlement', { ...base, [member]: value });
          assert.equal(r.status, 200, r.text);
          assert.equal(validateResponse('Settlement', r.json).ok, true, r.text);
        },
      ),
      { numRuns: 150, seed: 7 },
    );
  });
});
