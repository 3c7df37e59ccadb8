/**
 * The Start endpoint over real loopback HTTP: every check, their order, the echo, races.
 * The payment side is a fake (helpers.ts): it records accepts and can be made busy or failing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DeclineCodes } from '../../src/gateway/protocol/codes.js';
import { REDACTED_TOKEN, StartDeclined } from '../../src/start/index.js';
import {
  CONSUMER_DATA,
  INTEGRATOR,
  TERMINAL_ID,
  TOKEN,
  UNI_QR,
  freshTxId,
  post,
  startFixture,
  startPath,
  validStart,
  type Fixture,
} from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
let fx: Fixture;

before(async () => {
  // The rate limit has its own tests (limits.test.ts); here it must not get in the way.
  fx = await startFixture({ start: { rateLimit: { perSecond: 10_000, burst: 100_000 } } });
});
after(async () => {
  await fx.close();
});

function reset(): void {
  fx.payment.busy = null;
  fx.payment.failAccept = null;
  fx.payment.gate = null;
  fx.payment.busyAfterAccept = false;
  fx.payment.accepted.length = 0;
  fx.payment.answered.length = 0;
}

test('a valid Start is accepted: Approved, TransactionId and ConsumerData echoed, accept called once', T, async () => {
  reset();
  const body = validStart();
  const reply = await post(fx.endpoint, body);
  assert.equal(reply.status, 200);
  assert.deepEqual(reply.json.Status, { Verdict: 'Approved' });
  assert.equal(reply.json.TransactionId, body['TransactionId']);
  assert.deepEqual(reply.json.ConsumerData, CONSUMER_DATA);
  assert.equal(fx.payment.accepted.length, 1);
  const accepted = fx.payment.accepted[0]!;
  assert.equal(accepted.TransactionId, body['TransactionId']);
  assert.equal(accepted.Balance, 12.5);
  // The secret does not travel past authentication (it would end up in the ledger).
  assert.equal(accepted.SecretToken, REDACTED_TOKEN);
  assert.match(String(reply.headers['content-type']), /^application\/json/);
});

test(
  'the payment side hears that an Approved answer is written, before its log line; never for a Declined one',
  T,
  async () => {
    reset();
    const body = validStart();
    await post(fx.endpoint, body);
    assert.deepEqual(
      fx.payment.answered,
      [{ txId: body['TransactionId'], loggedBefore: false }],
      'the Authorization may go before the log write',
    );
    fx.payment.busy = 'vend in progress';
    const declined = validStart();
    const reply = await post(fx.endpoint, declined);
    assert.equal(reply.json.Status.Verdict, 'Declined');
    assert.equal(fx.payment.answered.length, 1, 'a Declined answer starts nothing');
  },
);

test('UniQR alone names this machine too', T, async () => {
  reset();
  const reply = await post(fx.endpoint, validStart({ TerminalId: undefined, UniQR: UNI_QR }));
  assert.equal(reply.json.Status.Verdict, 'Approved');
  assert.equal(fx.payment.accepted.length, 1);
});

test('the ConsumerData is echoed in a Declined answer as well', T, async () => {
  reset();
  const reply = await post(fx.endpoint, validStart({ TerminalId: 'TERM-9999' }));
  assert.equal(reply.json.Status.Code, DeclineCodes.UnknownMachine);
  assert.deepEqual(reply.json.ConsumerData, CONSUMER_DATA);
});

test('a Start for another machine is Declined 50 and starts nothing', T, async () => {
  reset();
  for (const ids of [
    { TerminalId: 'TERM-9999' },
    { TerminalId: undefined, UniQR: 'OTHER-QR' },
    { TerminalId: TERMINAL_ID, UniQR: 'OTHER-QR' }, // one identifier of another machine is enough to refuse
    { TerminalId: 'TERM-9999', UniQR: UNI_QR },
  ]) {
    const reply = await post(fx.endpoint, validStart(ids));
    assert.equal(reply.status, 200);
    assert.equal(reply.json.Status.Verdict, 'Declined', JSON.stringify(ids));
    assert.equal(reply.json.Status.Code, 50);
    assert.equal(reply.json.Status.CustomDeclineCode, 50);
  }
  assert.equal(fx.payment.accepted.length, 0);
});

test('a replayed TransactionId is Declined 996: one we accepted, and one the ledger knows', T, async () => {
  reset();
  const body = validStart();
  assert.equal((await post(fx.endpoint, body)).json.Status.Verdict, 'Approved');
  const replay = await post(fx.endpoint, body);
  assert.equal(replay.json.Status.Code, DeclineCodes.TransactionIdUnknownOrDuplicate);
  assert.equal(replay.json.Status.CustomDeclineCode, 996);

  const known = freshTxId();
  fx.payment.seen.add(known); // e.g. used before a restart: only the ledger remembers it
  const fromLedger = await post(fx.endpoint, validStart({ TransactionId: known }));
  assert.equal(fromLedger.json.Status.Code, 996);
  assert.equal(fx.payment.accepted.length, 1);
});

test('a busy machine is Declined 30 with the reason, and starts nothing', T, async () => {
  reset();
  for (const reason of ['reader not enabled', 'session running', 'sessions refused: disk']) {
    fx.payment.busy = reason;
    const reply = await post(fx.endpoint, validStart());
    assert.equal(reply.json.Status.Code, DeclineCodes.MachineNotResponding);
    assert.match(reply.json.Status.StatusMessage ?? '', new RegExp(reason));
  }
  assert.equal(fx.payment.accepted.length, 0);
});

test('wrong, empty, short and long tokens and a wrong integratorName get the very same answer', T, async () => {
  reset();
  const txId = freshTxId();
  const variants: Array<{ token: string; path?: string }> = [
    { token: TOKEN.replace(/.$/, (c) => (c === '0' ? '1' : '0')) }, // right length, last character wrong
    { token: '' },
    { token: TOKEN.slice(0, 63) }, // a prefix of the right token
    { token: TOKEN.slice(0, 8) },
    { token: `${TOKEN}0` }, // the right token plus one character
    { token: TOKEN.repeat(4) },
    { token: TOKEN.toUpperCase() === TOKEN ? TOKEN.toLowerCase() : TOKEN.toUpperCase() },
    { token: TOKEN, path: startPath('other-integrator') },
    { token: TOKEN, path: startPath(INTEGRATOR.toUpperCase()) },
  ];
  const replies = [];
  for (const v of variants) {
    const reply = await post(
      fx.endpoint,
      validStart({ TransactionId: txId, SecretToken: v.token }),
      v.path ? { path: v.path } : {},
    );
    replies.push({ status: reply.status, text: reply.text });
  }
  const first = replies[0]!;
  assert.equal(first.status, 200);
  const body = JSON.parse(first.text) as { Status: { Code: number } };
  assert.equal(body.Status.Code, DeclineCodes.NotAllowed);
  for (const [i, r] of replies.entries()) assert.deepEqual(r, first, `variant ${i} answered differently`);
  assert.equal(fx.payment.accepted.length, 0);
});

test('checks run in order: the earliest failing check decides the answer', T, async () => {
  reset();
  const used = freshTxId();
  fx.payment.seen.add(used);
  const cases: Array<{ name: string; body: unknown; path?: string; busy?: string; code: number }> = [
    { name: 'not JSON beats a wrong integratorName', body: '{"AppUserId":', path: startPath('nobody'), code: 998 },
    { name: 'schema beats a wrong token', body: validStart({ SecretToken: 'x', TransactionId: 'short' }), code: 998 },
    {
      name: 'missing member beats a wrong token',
      body: validStart({ SecretToken: 'x', AppUserId: undefined }),
      code: 997,
    },
    {
      name: 'token beats another terminal',
      body: validStart({ SecretToken: 'x'.repeat(64), TerminalId: 'TERM-9999' }),
      code: 9,
    },
    {
      name: 'integratorName beats another terminal',
      body: validStart({ TerminalId: 'TERM-9999' }),
      path: startPath('nobody'),
      code: 9,
    },
    {
      name: 'another terminal beats a replay',
      body: validStart({ TerminalId: 'TERM-9999', TransactionId: used }),
      code: 50,
    },
    {
      name: 'a replay beats a busy reader',
      body: validStart({ TransactionId: used }),
      busy: 'session running',
      code: 996,
    },
  ];
  for (const c of cases) {
    fx.payment.busy = c.busy ?? null;
    const reply = await post(fx.endpoint, c.body, c.path ? { path: c.path } : {});
    assert.equal(reply.status, 200, c.name);
    assert.equal(reply.json.Status.Code, c.code, c.name);
  }
  assert.equal(fx.payment.accepted.length, 0);
});

test('schema and length violations: 997 for a missing member, 998 for a bad one', T, async () => {
  reset();
  const cases: Array<[Record<string, unknown>, number, RegExp]> = [
    [{ AppUserId: undefined }, 997, /AppUserId/],
    [{ SecretToken: undefined }, 997, /SecretToken/],
    [{ TerminalId: undefined }, 997, /TerminalId or UniQR/],
    [{ TransactionId: undefined }, 997, /TransactionId/],
    [{ AppUserId: 'u'.repeat(41) }, 998, /AppUserId/],
    [{ TransactionId: 't'.repeat(7) }, 998, /TransactionId/],
    [{ TransactionId: 't'.repeat(41) }, 998, /TransactionId/],
    [{ TerminalId: 'T'.repeat(256) }, 998, /TerminalId/],
    [{ Balance: 1.2345 }, 998, /Balance/],
    [{ Balance: -1 }, 998, /Balance/],
    [{ SecretToken: 12345 }, 998, /SecretToken/],
    [{ ConsumerData: [1, 2] }, 998, /ConsumerData/],
  ];
  for (const [overrides, code, member] of cases) {
    const reply = await post(fx.endpoint, validStart(overrides));
    assert.equal(reply.json.Status.Code, code, JSON.stringify(overrides).slice(0, 80));
    assert.match(reply.json.Status.StatusMessage ?? '', member);
  }
  for (const body of ['[]', 'null', '"text"', '42', '{}']) {
    const reply = await post(fx.endpoint, body);
    assert.ok(reply.json.Status.Code === 997 || reply.json.Status.Code === 998, body);
  }
  const deep = await post(
    fx.endpoint,
    validStart({ ConsumerData: JSON.parse(`${'{"a":'.repeat(40)}1${'}'.repeat(40)}`) }),
  );
  assert.equal(deep.json.Status.Code, 998);
  assert.match(deep.json.Status.StatusMessage ?? '', /nested deeper/);
  const notJson = await post(fx.endpoint, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])); // invalid UTF-8
  assert.equal(notJson.json.Status.Code, 998);
  assert.equal(fx.payment.accepted.length, 0);
});

test('an accept hook that throws is Declined 6, and the TransactionId stays usable', T, async () => {
  reset();
  fx.payment.failAccept = new Error('ledger write failed');
  const body = validStart();
  const failed = await post(fx.endpoint, body);
  assert.equal(failed.json.Status.Code, DeclineCodes.GeneralSystemFailure);
  assert.doesNotMatch(failed.text, /ledger write failed/); // internals stay in the log
  fx.payment.failAccept = null;
  const retried = await post(fx.endpoint, body);
  assert.equal(retried.json.Status.Verdict, 'Approved');
});

test('an accept hook that declines with a code (StartDeclined) answers that code and message', T, async () => {
  reset();
  fx.payment.failAccept = new StartDeclined(
    DeclineCodes.InsufficientFunds,
    'insufficient funds: the balance is below the smallest amount',
  );
  const reply = await post(fx.endpoint, validStart());
  assert.equal(reply.json.Status.Verdict, 'Declined');
  assert.equal(reply.json.Status.Code, DeclineCodes.InsufficientFunds);
  assert.equal(reply.json.Status.CustomDeclineCode, DeclineCodes.InsufficientFunds);
  assert.match(reply.json.Status.StatusMessage ?? '', /insufficient funds/);
  fx.payment.failAccept = null;
});

test('racing Starts with one TransactionId: exactly one is accepted, the others get 996', T, async () => {
  reset();
  let open!: () => void;
  fx.payment.gate = new Promise<void>((resolve) => (open = resolve));
  const body = validStart();
  const racing = Array.from({ length: 8 }, () => post(fx.endpoint, body));
  // The first accept holds the gate; wait until it has been called before letting it finish.
  while (fx.payment.accepted.length === 0) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50));
  open();
  const codes = (await Promise.all(racing)).map((r) => r.json.Status.Code ?? 'Approved');
  assert.equal(codes.filter((c) => c === 'Approved').length, 1, codes.join(','));
  assert.equal(codes.filter((c) => c === 996).length, 7, codes.join(','));
  assert.equal(fx.payment.accepted.length, 1);
});

test('racing Starts with different TransactionIds: one is accepted, the others find the machine busy', T, async () => {
  reset();
  fx.payment.busyAfterAccept = true; // a Start arriving after the winner was accepted finds its session
  let open!: () => void;
  fx.payment.gate = new Promise<void>((resolve) => (open = resolve));
  const racing = Array.from({ length: 5 }, () => post(fx.endpoint, validStart()));
  while (fx.payment.accepted.length === 0) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50));
  open();
  const codes = (await Promise.all(racing)).map((r) => r.json.Status.Code ?? 'Approved');
  assert.equal(codes.filter((c) => c === 'Approved').length, 1, codes.join(','));
  assert.equal(codes.filter((c) => c === 30).length, 4, codes.join(','));
  assert.equal(fx.payment.accepted.length, 1);
});

test('wrong path 404, wrong method 405, wrong Content-Type 415: each with a Declined JSON body', T, async () => {
  reset();
  const notFound = await post(fx.endpoint, validStart(), { path: '/payment/v2/transactions/Gateway/start' });
  assert.equal(notFound.status, 404);
  assert.equal(notFound.json.Status.Verdict, 'Declined');
  for (const path of [
    '/',
    `${startPath()}/`,
    startPath().replace('/v2/', '/v1/'),
    '/payment/v2/transactions/Gateway/a/b/start',
  ]) {
    assert.equal((await post(fx.endpoint, validStart(), { path })).status, 404, path);
  }
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    const reply = await post(fx.endpoint, validStart(), { method });
    assert.equal(reply.status, 405, method);
    assert.equal(reply.headers['allow'], 'POST');
    assert.equal(reply.json.Status.Code, 998);
  }
  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/json; charset=latin1',
    'multipart/form-data',
    'json',
  ]) {
    const reply = await post(fx.endpoint, validStart(), { headers: { 'Content-Type': type } });
    assert.equal(reply.status, 415, type);
    assert.equal(reply.json.Status.Verdict, 'Declined');
  }
  assert.equal(fx.payment.accepted.length, 0);
});

test("the seed's media types are accepted: application/json, application/*+json, text/json", T, async () => {
  reset();
  for (const type of [
    'application/json',
    'Application/JSON; charset=UTF-8',
    'application/vnd.wallet.start+json',
    'text/json',
  ]) {
    const reply = await post(fx.endpoint, validStart(), { headers: { 'Content-Type': type } });
    assert.equal(reply.json.Status.Verdict, 'Approved', type);
  }
  assert.equal(fx.payment.accepted.length, 4);
});

test('stats count answers by HTTP status and decline code, each answer once', T, async () => {
  // Its own endpoint: the counts are exact, whatever the tests before it sent.
  const own = await startFixture({ start: { rateLimit: { perSecond: 10_000, burst: 100_000 } } });
  try {
    const first = validStart();
    const sent = [
      await post(own.endpoint, first),
      await post(own.endpoint, validStart()),
      await post(own.endpoint, first), // replay: 996
      await post(own.endpoint, validStart({ SecretToken: 'y'.repeat(64) })), // wrong token: 9
      await post(own.endpoint, validStart({ SecretToken: 'short' })), // 9, the same answer
      await post(own.endpoint, validStart(), { method: 'GET' }), // 405, 998
      await post(own.endpoint, validStart(), { headers: { 'Content-Type': 'text/plain' } }), // 415
    ];
    own.payment.busy = 'vend in progress';
    sent.push(await post(own.endpoint, validStart())); // 30
    assert.deepEqual(
      sent.map((r) => [r.status, r.json.Status.Code ?? r.json.Status.Verdict]),
      [
        [200, 'Approved'],
        [200, 'Approved'],
        [200, 996],
        [200, 9],
        [200, 9],
        [405, 998],
        [415, 998],
        [200, 30],
      ],
    );
    const stats = own.endpoint.stats();
    assert.equal(stats.accepted, 2);
    assert.deepEqual(stats.declinedByCode, { '9': 2, '30': 1, '996': 1, '998': 2 });
    assert.deepEqual(stats.byHttpStatus, { '200': 6, '405': 1, '415': 1 });
    assert.equal(stats.aborted, 0);
    assert.equal(stats.requests, 8);
  } finally {
    await own.close();
  }
});
