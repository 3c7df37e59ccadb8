import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  brokerLabel,
  checkCommand,
  parseArgsText,
  parseConnectionOptions,
  readPasswordFile,
} from '../../../src/fleet/operator/index.js';
import { isQrvendError } from '../../../src/core/errors.js';

const usageError = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (err: unknown) => isQrvendError(err, 'CLI_USAGE') && pattern.test(err.message));

test(
  'connection options: URL schemes, no password in the URL, prefix levels, certificate with key',
  { timeout: 5_000 },
  () => {
    assert.equal(parseConnectionOptions({ url: 'mqtt://127.0.0.1:1883' }).prefix, 'qrvend');
    assert.equal(
      parseConnectionOptions({ url: 'mqtts://broker.example:8883', prefix: 'acme/vend' }).prefix,
      'acme/vend',
    );
    usageError(() => parseConnectionOptions({ url: 'http://broker:1883' }), /url: must be mqtt/);
    usageError(() => parseConnectionOptions({ url: 'mqtt://op:hunter2@broker:1883' }), /must not carry a password/);
    usageError(() => parseConnectionOptions({ url: 'mqtt://broker', prefix: 'a/+/b' }), /prefix/);
    usageError(() => parseConnectionOptions({ url: 'mqtt://broker', prefix: 'a/#' }), /prefix/);
    usageError(() => parseConnectionOptions({ url: 'mqtt://broker', certFile: '/c.pem' }), /both --cert and --key/);
    usageError(() => parseConnectionOptions({ url: 'mqtt://broker', passwordFile: '/p' }), /needs --username/);
    assert.equal(brokerLabel('mqtt://user@host:1883'), 'mqtt://host:1883');
  },
);

test(
  'the password file: one line, trailing newline dropped; its content never in the error',
  { timeout: 5_000 },
  (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-fleet-pw-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'ok'), 's3cret-pw\n');
    assert.equal(readPasswordFile(join(dir, 'ok')).toString(), 's3cret-pw');
    writeFileSync(join(dir, 'two'), 's3cret-pw\nsecond\n');
    assert.throws(
      () => readPasswordFile(join(dir, 'two')),
      (err: unknown) => isQrvendError(err, 'SECRET_UNREADABLE') && !err.message.includes('s3cret'),
    );
    assert.throws(
      () => readPasswordFile(join(dir, 'missing')),
      (err: unknown) => isQrvendError(err, 'CONFIG_UNREADABLE') && /ENOENT/.test(err.message),
    );
  },
);

test('commands are checked before they leave: name, machine id, arguments by the contract', { timeout: 5_000 }, () => {
  assert.equal(checkCommand('M1', 'ping', undefined), 'ping');
  assert.equal(checkCommand('M1', 'config.get', { key: 'gateway.timeoutMs' }), 'config.get');
  assert.equal(checkCommand('M1', 'outbox.retry', {}), 'outbox.retry');
  usageError(() => checkCommand('M1', 'rm-rf', undefined), /unknown command "rm-rf".*/);
  usageError(() => checkCommand('M1/#', 'ping', undefined), /machine id/);
  usageError(() => checkCommand('+', 'ping', undefined), /machine id/);
  usageError(() => checkCommand('M1', 'ping', { x: 1 }), /ping takes no arguments/);
  usageError(() => checkCommand('M1', 'outbox.retry', { id: -1 }), /arguments of outbox.retry refused: id/);
  usageError(() => checkCommand('M1', 'config.set', { set: {}, extra: 1 }), /arguments of config.set refused/);
  assert.deepEqual(parseArgsText('{"key":"a"}'), { key: 'a' });
  assert.equal(parseArgsText(undefined), undefined);
  usageError(() => parseArgsText('[1]'), /JSON object/);
  usageError(() => parseArgsText('{key:1}'), /one JSON object/);
  usageError(() => parseArgsText(`{"k":"${'x'.repeat(70_000)}"}`), /larger than/);
});
