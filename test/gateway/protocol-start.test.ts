/** Start request rules: mandatory members, lengths, TerminalId-or-UniQR, TransactionId 8..40, Balance. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StartResponseSchema, validateStartRequest } from '../../src/gateway/protocol/index.js';
import { withMember } from './helpers.js';

const TOKEN = 'T'.repeat(64);
const BASE = {
  AppUserId: 'user-1',
  SecretToken: TOKEN,
  TerminalId: 'TERM-1',
  TransactionId: 'abcdefgh12',
  Balance: 3.5,
  ConsumerData: { loyalty: { id: 7 } },
};

function problem(body: unknown) {
  const r = validateStartRequest(body);
  assert.equal(
    r.ok,
    false,
    `expected a problem for ${JSON.stringify({ ...(body as object), SecretToken: '[hidden]' })}`,
  );
  if (r.ok) throw new Error('unreachable');
  assert.ok(!r.message.includes(TOKEN), 'the message never carries the token');
  return r;
}
const ok = (body: unknown) =>
  assert.equal(validateStartRequest(body).ok, true, JSON.stringify(validateStartRequest(body)));

describe('Start request', () => {
  it('a complete request passes and keeps ConsumerData', () => {
    const r = validateStartRequest(BASE);
    assert.ok(r.ok);
    assert.deepEqual(r.value.ConsumerData, BASE.ConsumerData);
  });
  it('mandatory members: missing -> 997 naming the member', () => {
    for (const m of ['AppUserId', 'SecretToken', 'TransactionId']) {
      const r = problem(withMember(BASE, m, undefined));
      assert.equal(r.code, 997);
      assert.equal(r.member, m);
    }
  });
  it('TerminalId or UniQR: either one passes, neither -> 997', () => {
    ok({ ...withMember(BASE, 'TerminalId', undefined), UniQR: 'QR-1' });
    ok(BASE);
    ok({ ...BASE, UniQR: 'QR-1' });
    const r = problem(withMember(BASE, 'TerminalId', undefined));
    assert.equal(r.code, 997);
    assert.equal(r.member, 'TerminalId');
    assert.match(r.message, /UniQR/);
    assert.equal(problem({ ...BASE, TerminalId: null, UniQR: null }).code, 997);
  });
  it('lengths: at the limit passes, one past fails with 998', () => {
    const limits: [string, number][] = [
      ['AppUserId', 40],
      ['SecretToken', 64],
      ['TerminalId', 255],
      ['TransactionId', 40],
    ];
    for (const [m, n] of limits) {
      ok(withMember(BASE, m, 'a'.repeat(n)));
      const r = problem(withMember(BASE, m, 'a'.repeat(n + 1)));
      assert.deepEqual([r.code, r.member], [998, m]);
    }
    ok({ ...withMember(BASE, 'TerminalId', undefined), UniQR: 'q'.repeat(255) });
    assert.equal(problem({ ...withMember(BASE, 'TerminalId', undefined), UniQR: 'q'.repeat(256) }).member, 'UniQR');
  });
  it('TransactionId is 8..40 characters', () => {
    ok(withMember(BASE, 'TransactionId', '12345678'));
    const r = problem(withMember(BASE, 'TransactionId', '1234567'));
    assert.deepEqual([r.code, r.member], [998, 'TransactionId']);
    assert.equal(problem(withMember(BASE, 'TransactionId', 12345678)).code, 998);
  });
  it('Balance: optional, at most 3 decimals, not negative, a number', () => {
    ok(withMember(BASE, 'Balance', undefined));
    ok(withMember(BASE, 'Balance', 12.345));
    ok(withMember(BASE, 'Balance', 0));
    for (const bad of [12.3456, -1, '12.5', 1e-7]) {
      const r = problem(withMember(BASE, 'Balance', bad));
      assert.deepEqual([r.code, r.member], [998, 'Balance'], String(bad));
    }
  });
  it('Balance too large says so (1e21 prints as "1e+21": the problem is its size, not its decimals)', () => {
    for (const big of [1e21, 1e16, 9007199254741]) {
      const r = problem(withMember(BASE, 'Balance', big));
      assert.deepEqual([r.code, r.member], [998, 'Balance'], String(big));
      assert.match(r.message, /too large \(at most 9007199254740\)/, String(big));
    }
    ok(withMember(BASE, 'Balance', 9007199254740));
    assert.match(
      problem(withMember(BASE, 'Balance', 1e-7)).message,
      /decimal digits/,
      'a tiny amount is still a decimals problem',
    );
  });
  it('wrong types and empty mandatory strings -> 998', () => {
    assert.equal(problem(withMember(BASE, 'AppUserId', 5)).code, 998);
    assert.equal(problem(withMember(BASE, 'AppUserId', '')).code, 998);
    assert.equal(problem(withMember(BASE, 'ConsumerData', 'text')).member, 'ConsumerData');
    assert.equal(problem('not an object').code, 998);
  });
  it('the Start response schema: Status, TransactionId and the ConsumerData echo; closed', () => {
    const answer = {
      Status: { Verdict: 'Approved' },
      TransactionId: BASE.TransactionId,
      ConsumerData: BASE.ConsumerData,
    };
    assert.equal(StartResponseSchema.safeParse(answer).success, true);
    assert.equal(StartResponseSchema.safeParse({ ...answer, Extra: 1 }).success, false);
    assert.equal(
      StartResponseSchema.safeParse({ Status: { Verdict: 'Declined', Code: 996, CustomDeclineCode: 996 } }).success,
      true,
    );
  });
});
