import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAnswerJson, rawPostRequest } from '../../bench/support/raw-http.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const answer = (head: string, body: string) => Buffer.from(`${head}\r\n\r\n${body}`, 'utf8');

test('the request is one HTTP/1.1 POST with the exact body length and Connection: close', T, () => {
  const body = JSON.stringify({ Name: 'Grüße' });
  const text = rawPostRequest(
    new URL('http://127.0.0.1:8091/payment/v2/transactions/Gateway/x/start?a=1'),
    body,
  ).toString('utf8');
  const [head, sent] = text.split('\r\n\r\n') as [string, string];
  assert.match(head, /^POST \/payment\/v2\/transactions\/Gateway\/x\/start\?a=1 HTTP\/1\.1\r\n/);
  assert.match(head, /\r\nHost: 127\.0\.0\.1:8091\r\n/);
  assert.match(head, new RegExp(`\\r\\nContent-Length: ${Buffer.byteLength(body)}\\r\\n`), 'bytes, not characters');
  assert.match(head, /\r\nConnection: close$/);
  assert.equal(sent, body);
});

test('an answer with a Content-Length gives its JSON object', T, () => {
  const body = '{"Status":{"Verdict":"Approved"}}';
  assert.deepEqual(
    parseAnswerJson(
      answer(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: ${body.length}`, body),
    ),
    { Status: { Verdict: 'Approved' } },
  );
});

test('a cut, chunked, non-HTTP or non-object answer is refused with the reason', T, () => {
  assert.throws(() => parseAnswerJson(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n')), /no complete head/);
  assert.throws(
    () => parseAnswerJson(answer('HTTP/1.1 200 OK\r\nContent-Length: 10', '{}')),
    /2 bytes, its Content-Length says 10/,
  );
  assert.throws(
    () => parseAnswerJson(answer('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked', '2\r\n{}\r\n0\r\n\r\n')),
    /Transfer-Encoding/,
  );
  assert.throws(() => parseAnswerJson(answer('SSH-2.0-x\r\nContent-Length: 2', '{}')), /not HTTP/);
  assert.throws(() => parseAnswerJson(answer('HTTP/1.1 200 OK\r\nContent-Length: 2', '[]')), /not a JSON object/);
  assert.throws(() => parseAnswerJson(answer('HTTP/1.1 200 OK', '{}')), /no Content-Length/);
});
