/** The logger's redaction: the Start SecretToken never reaches a log line, wherever it sits. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/core/log.js';

const TOKEN = 'S3cr3t'.repeat(10) + 'WXYZ'; // 64 characters

function capture() {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { log: createLogger({ level: 'debug', destination }), text: () => chunks.join('') };
}

test('SecretToken is redacted at the top level, in a request body and one level deeper', () => {
  const { log, text } = capture();
  log.info({ SecretToken: TOKEN }, 'top');
  log.info({ body: { SecretToken: TOKEN, TransactionId: 'TX-1' } }, 'body');
  log.info({ req: { body: { SecretToken: TOKEN } } }, 'nested');
  log.info({ secretToken: TOKEN, token: TOKEN, headers: { authorization: `Bearer ${TOKEN}` } }, 'other names');
  const out = text();
  assert.equal(out.includes(TOKEN), false, 'the token reached the log');
  const lines = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);
  assert.equal(lines.length, 4);
  assert.equal(lines[0]!.SecretToken, '[redacted]');
  assert.equal(lines[1]!.body.SecretToken, '[redacted]');
  assert.equal(lines[1]!.body.TransactionId, 'TX-1', 'only the secret is removed');
  assert.equal(lines[2]!.req.body.SecretToken, '[redacted]');
  assert.equal(lines[3]!.headers.authorization, '[redacted]');
});

test('lines are NDJSON with the configured level honoured', () => {
  const chunks: string[] = [];
  const destination = new Writable({ write: (c: Buffer, _e, done) => (chunks.push(c.toString()), done()) });
  const log = createLogger({ level: 'warn', destination });
  log.info('dropped');
  log.warn('kept');
  const lines = chunks.join('').trim().split('\n');
  assert.equal(lines.length, 1);
  assert.equal(JSON.parse(lines[0]!).level, 'warn');
  assert.equal(JSON.parse(lines[0]!).msg, 'kept');
});
