/**
 * The Start checks (src/start/request-checks.ts) called in-process, for what the HTTP tests do not reach:
 * the replay memory's bound (the oldest TransactionId is forgotten first, the ledger still
 * answers for it), the vouched path of a relayed Start, a member named twice, and a hook that
 * throws synchronously (an answer still, never an exception).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStartChecks, type StartHooks } from '../../src/start/request-checks.js';
import { createSecretMatcher } from '../../src/start/secret-compare.js';
import { INTEGRATOR, TERMINAL_ID, TOKEN, validStart } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

function checks(hooks: Partial<StartHooks> = {}, rememberAccepted?: number) {
  const accepted: string[] = [];
  const errors: string[] = [];
  const c = createStartChecks({
    integratorName: INTEGRATOR,
    acceptedTerminalIds: [TERMINAL_ID],
    acceptedUniQr: [],
    secret: createSecretMatcher(Buffer.from(TOKEN)),
    hooks: {
      readerBusy: () => null,
      transactionSeen: () => false,
      accept: async (r) => void accepted.push(r.TransactionId),
      ...hooks,
    },
    ...(rememberAccepted === undefined ? {} : { rememberAccepted }),
    onError: (stage) => void errors.push(stage),
  });
  const decide = async (body: Record<string, unknown> | string, vouched?: boolean) => {
    const a = await c.decide(INTEGRATOR, Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)), vouched);
    return a.body.Status.Verdict === 'Approved' ? 'approved' : a.body.Status.Code;
  };
  return { c, decide, accepted, errors };
}

test(
  'the replay memory keeps the newest TransactionIds: the oldest is forgotten first',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const { decide } = checks({}, 2);
    const [a, b, c] = [validStart(), validStart(), validStart()];
    for (const s of [a, b, c]) assert.equal(await decide(s), 'approved');
    // b and c are remembered, a was dropped (the ledger, a hook here that knows nothing, would answer for it).
    assert.equal(await decide({ ...b, AppUserId: 'other' }), 996);
    assert.equal(await decide({ ...c, AppUserId: 'other' }), 996);
    assert.equal(await decide({ ...a, AppUserId: 'other' }), 'approved');
  },
);

test('without a bound given, ten thousand TransactionIds are remembered', { timeout: TEST_DEADLINE_MS }, async () => {
  const { decide } = checks();
  const first = validStart();
  assert.equal(await decide(first), 'approved');
  for (let i = 0; i < 9_999; i += 1) assert.equal(await decide(validStart()), 'approved');
  assert.equal(await decide(first), 996, 'the first of 10,000 is still remembered');
  assert.equal(await decide(validStart()), 'approved');
  assert.equal(await decide(first), 'approved', 'the 10,001st pushed the first out');
});

test(
  'a relayed Start (vouched) comes without its token and is accepted; one that carries a token is refused 9',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const { decide, accepted } = checks();
    const { SecretToken: _token, ...withoutToken } = validStart();
    assert.equal(await decide(withoutToken, true), 'approved');
    assert.equal(accepted.length, 1);
    assert.equal(await decide(validStart(), true), 9);
    // Not vouched, the same body without a token is a schema failure, never accepted.
    const { SecretToken: _t2, ...again } = validStart();
    assert.notEqual(await decide(again), 'approved');
  },
);

test('a member named twice is 998, and nothing is accepted', { timeout: TEST_DEADLINE_MS }, async () => {
  const { decide, accepted } = checks();
  const body = JSON.stringify(validStart()).replace(/^\{/, `{"TerminalId":"${TERMINAL_ID}",`);
  assert.equal(await decide(body), 998);
  assert.deepEqual(accepted, []);
});

test(
  'a hook that throws synchronously: 999 for the wallet, the error to onError, and the next Start is judged',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    let throwing = true;
    const { decide, errors } = checks({
      readerBusy: () => {
        if (throwing) throw new Error('reader state unreadable');
        return null;
      },
    });
    assert.equal(await decide(validStart()), 999);
    assert.deepEqual(errors, ['internal']);
    throwing = false;
    assert.equal(await decide(validStart()), 'approved');
  },
);

test(
  'a body that is not valid UTF-8 is 998, even where JSON.parse would take the replacement characters',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const { c, decide, accepted } = checks();
    const text = JSON.stringify(validStart({ AppUserId: 'user-XX' }));
    const at = text.indexOf('XX');
    const body = Buffer.from(text);
    body[at] = 0xff; // a byte that never occurs in UTF-8
    const answer = await c.decide(INTEGRATOR, body);
    assert.equal(answer.body.Status.Code, 998);
    assert.deepEqual(accepted, []);
    assert.equal(c.accepting, null, 'nothing is being accepted');
    assert.equal(await decide(validStart()), 'approved');
  },
);
