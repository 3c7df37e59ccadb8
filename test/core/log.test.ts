/**
 * The logger's redaction: the Start SecretToken never reaches a log line, wherever it sits; and a
 * logger made for a file, whose file the daemon's worker threads log to (logFileOf).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, logFileOf } from '../../src/core/log.js';

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

test('a logger made for a file appends its lines there, redacted, and names the file for the worker threads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-log-'));
  try {
    const file = join(dir, 'agent.log');
    writeFileSync(file, '{"msg":"a line already there"}\n');
    const log = createLogger({ level: 'info', name: 'main', file, sync: true });
    log.info({ SecretToken: TOKEN }, 'from the main thread');
    // A worker thread's logger on the same file (sync, as the workers' are): appended after.
    const worker = createLogger({ level: 'info', name: 'payment', file: logFileOf(log), sync: true });
    worker.warn('from a worker');
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    assert.deepEqual(
      lines.map((l) => [l.name, l.msg]),
      [
        [undefined, 'a line already there'],
        ['main', 'from the main thread'],
        ['payment', 'from a worker'],
      ],
    );
    assert.equal(lines[1]!.SecretToken, '[redacted]');
    assert.equal(logFileOf(log), file);
    assert.equal(logFileOf(worker), file);
    assert.equal(logFileOf(createLogger({ level: 'info', destination: new Writable() })), null, 'a stream is no file');
    assert.equal(logFileOf(createLogger({ level: 'info' })), null, 'stdout is no file: workers log to stdout');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
