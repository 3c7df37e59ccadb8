/**
 * Unit tests of the Start endpoint's parts: token bucket, secret comparison, secret file,
 * path and media-type rules.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isQrvendError } from '../../src/core/errors.js';
import { ClientRateLimiter } from '../../src/start/rate-limit.js';
import { createSecretMatcher } from '../../src/start/secret-compare.js';
import { readSecretToken } from '../../src/start/secret-file.js';
import { jsonDepthWithin } from '../../src/start/json-depth.js';
import { declaredLength, isAcceptedContentType, matchStartPath } from '../../src/start/route.js';

test('token bucket: burst, then refill at the sustained rate', () => {
  const limiter = new ClientRateLimiter({ perSecond: 10, burst: 3 });
  const at = (ms: number) => limiter.take('a', ms).allowed;
  assert.deepEqual([at(0), at(0), at(0), at(0)], [true, true, true, false]);
  const refused = limiter.take('a', 0);
  assert.deepEqual(refused, { allowed: false, retryAfterMs: 100 });
  assert.equal(at(50), false); // half a token
  assert.equal(at(100), true); // one token after 100 ms at 10/s
  assert.equal(limiter.take('b', 100).allowed, true); // clients are independent
});

test('token bucket: a clock going backwards mints no tokens', () => {
  const limiter = new ClientRateLimiter({ perSecond: 1, burst: 1 });
  assert.equal(limiter.take('a', 10_000).allowed, true);
  assert.equal(limiter.take('a', 0).allowed, false);
  assert.equal(limiter.take('a', 10_500).allowed, false);
  assert.equal(limiter.take('a', 11_000).allowed, true);
});

test('token bucket: the client table is bounded; idle buckets are dropped first', () => {
  const limiter = new ClientRateLimiter({ perSecond: 1, burst: 2 }, 100);
  for (let i = 0; i < 1_000; i += 1) limiter.take(`10.0.${i >> 8}.${i & 255}`, 0);
  assert.ok(limiter.trackedClients <= 100);
  // A busy client keeps its (empty) bucket while idle ones come and go after it refilled.
  const busy = new ClientRateLimiter({ perSecond: 1, burst: 2 }, 3);
  busy.take('busy', 0);
  busy.take('busy', 0);
  busy.take('x', 0);
  busy.take('y', 0);
  busy.take('z', 5_000); // x and y full again by now: dropped instead of 'busy'
  assert.equal(busy.take('busy', 5_000).allowed, true);
});

test('secret matcher: only the exact token matches, whatever the length of the attempt', () => {
  const token = 'k'.repeat(32) + 'Z'.repeat(32);
  const matcher = createSecretMatcher(Buffer.from(token));
  assert.equal(matcher.matches(token), true);
  for (const attempt of [
    '',
    token.slice(0, 63),
    `${token}k`,
    token.toLowerCase(),
    'k'.repeat(64),
    token.repeat(10),
    '\u00e9'.repeat(64),
  ]) {
    assert.equal(matcher.matches(attempt), false, `${attempt.length} characters`);
  }
  // Two matchers for the same token agree although each draws its own key.
  assert.equal(createSecretMatcher(Buffer.from(token)).matches(token), true);
});

function tempFile(content: string | Buffer): { file: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-secret-'));
  const file = join(dir, 'secret-token');
  writeFileSync(file, content, { mode: 0o600 });
  return { file, dir };
}

test('readSecretToken: trims (spaces, newline, a byte-order mark) and returns the 64 characters', () => {
  const token = 'A1'.repeat(32);
  for (const content of [
    `  ${token}\n`,
    `${token}\r\n`,
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(token)]),
  ]) {
    const { file, dir } = tempFile(content);
    try {
      assert.deepEqual(readSecretToken(file), Buffer.from(token));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('readSecretToken: every problem names the file and the problem, never the content', () => {
  const secretish = 'Q7w'.repeat(20); // 60 characters: the wrong length
  const cases: Array<[string | Buffer | null, RegExp]> = [
    [null, /not found/],
    ['', /empty/],
    [secretish, /60 characters.*expected exactly 64/],
    [`${'Q7w'.repeat(21)}Q7w`, /66 characters/],
    [`${'a'.repeat(64)}\n${'b'.repeat(64)}`, /more than one/],
    [`${'c'.repeat(63)}\u00e9`, /printable ASCII/],
    [`${'c'.repeat(32)}\u0007${'c'.repeat(31)}`, /printable ASCII/],
  ];
  for (const [content, problem] of cases) {
    const { file, dir } = tempFile(content ?? 'x');
    if (content === null) rmSync(file);
    try {
      assert.throws(
        () => readSecretToken(file),
        (err: unknown) => {
          assert.ok(isQrvendError(err, 'SECRET_UNREADABLE'), String(err));
          const shown = `${err.describe()} ${JSON.stringify(err.toJSON())}`;
          assert.match(shown, problem);
          assert.ok(shown.includes(file), 'the file is named');
          if (typeof content === 'string' && content.length > 0) {
            assert.ok(!shown.includes(content.slice(0, 12)), 'no content in the error');
          }
          return true;
        },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('readSecretToken: a directory or an unreadable file is refused clearly', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-secret-'));
  try {
    assert.throws(() => readSecretToken(dir), /is a directory/);
    const file = join(dir, 'locked');
    writeFileSync(file, 'z'.repeat(64));
    chmodSync(file, 0o000);
    if (process.getuid?.() === 0) {
      t.diagnostic('running as root: permission bits do not stop reads, skipping the EACCES case');
    } else {
      assert.throws(() => readSecretToken(file), /permission denied/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Start path: the integratorName segment, decoded; anything else is not the Start path', () => {
  assert.equal(matchStartPath('/payment/v2/transactions/Gateway/acme/start'), 'acme');
  assert.equal(matchStartPath('/payment/v2/transactions/Gateway/acme/start?x=1'), 'acme');
  assert.equal(matchStartPath('/payment/v2/transactions/Gateway/ac%20me/start'), 'ac me');
  for (const target of [
    '/payment/v2/transactions/Gateway//start',
    '/payment/v2/transactions/Gateway/a/b/start',
    '/payment/v2/transactions/gateway/acme/start',
    '/payment/v2/transactions/Gateway/acme/start/',
    '/payment/v2/transactions/Gateway/%E0%A4%A/start',
    `/payment/v2/transactions/Gateway/${'a'.repeat(3000)}/start`,
    '*',
    'http://example.com/payment/v2/transactions/Gateway/acme/start',
  ]) {
    assert.equal(matchStartPath(target), null, target.slice(0, 60));
  }
});

test("media types: the seed's three, UTF-8 only", () => {
  for (const ok of [
    'application/json',
    'APPLICATION/JSON',
    'application/json; charset=utf-8',
    'application/json;charset="UTF-8"',
    'text/json',
    'application/problem+json',
    'application/json; foo=bar',
  ]) {
    assert.equal(isAcceptedContentType(ok), true, ok);
  }
  for (const bad of [
    undefined,
    '',
    'text/plain',
    'application/jsonx',
    'application/+json',
    'application/json; charset=iso-8859-1',
    'text/json; charset=utf-16',
  ]) {
    assert.equal(isAcceptedContentType(bad), false, String(bad));
  }
});

test('declared length: digits only', () => {
  assert.equal(declaredLength(undefined), null);
  assert.equal(declaredLength('0'), 0);
  assert.equal(declaredLength(' 42 '), 42);
  assert.equal(declaredLength('-1'), 'invalid');
  assert.equal(declaredLength('1e3'), 'invalid');
});

test('JSON nesting bound: counts arrays and objects, ignores brackets inside strings', () => {
  assert.equal(jsonDepthWithin('{"a":[1,{"b":2}]}', 3), true);
  assert.equal(jsonDepthWithin('{"a":[1,{"b":[2]}]}', 3), false);
  assert.equal(jsonDepthWithin(`{"a":"${'['.repeat(100)}\\"{{{"}`, 1), true);
  assert.equal(jsonDepthWithin('['.repeat(33) + ']'.repeat(33)), false);
  assert.equal(jsonDepthWithin('['.repeat(32) + ']'.repeat(32)), true);
});
