import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isQrvendError } from '../../src/core/errors.js';
import { parseConsoleConfig } from '../../src/console/config.js';
import { consoleInput, splitListen } from '../../src/console/run.js';

const BROKER = { url: 'mqtt://127.0.0.1:1883' };

function refusal(input: unknown): string {
  try {
    parseConsoleConfig(input);
  } catch (err) {
    assert.ok(isQrvendError(err));
    return `${err.code}: ${err.message}`;
  }
  throw new Error('accepted');
}

test('defaults: SQLite file, loopback listen, shared subscription', () => {
  const s = parseConsoleConfig({ broker: BROKER });
  assert.deepEqual(
    [s.db, s.listen, s.subscription, s.group, s.transport],
    ['./console.sqlite', '127.0.0.1:8480', 'shared', 'qrvend-console', 'loopback'],
  );
});

test('each bad key is named, numbers out of range refused', () => {
  const message = refusal({ broker: BROKER, pageSize: 5, login: { failures: 0 }, listen: 'nowhere', bogus: 1 });
  assert.match(message, /^CONFIG_INVALID/);
  for (const key of ['pageSize', 'login.failures', 'listen', 'bogus'])
    assert.match(message, new RegExp(key.replace('.', '\\.')));
});

test('plain MQTT to a broker on another host is refused', () => {
  assert.match(
    refusal({ broker: { url: 'mqtt://broker.example:1883' } }),
    /broker\.url: plain mqtt:\/\/ only to a loopback broker/,
  );
});

test('plain HTTP off loopback is refused unless a TLS proxy is in front', () => {
  assert.match(refusal({ broker: BROKER, listen: '0.0.0.0:8480' }), /^CONSOLE_LISTEN_REFUSED/);
  assert.equal(
    parseConsoleConfig({ broker: BROKER, listen: '0.0.0.0:8480', behindTlsProxy: true }).transport,
    'tls-proxy',
  );
  assert.equal(
    parseConsoleConfig({ broker: BROKER, listen: '0.0.0.0:8480', certFile: '/c.pem', keyFile: '/k.pem' }).transport,
    'https',
  );
});

test('flags override the file; a postgres URL is a database too', () => {
  const input = consoleInput({
    broker: 'mqtt://127.0.0.1:1884',
    db: 'postgres://console@127.0.0.1:5432/console',
    listen: '[::1]:9000',
  });
  const s = parseConsoleConfig(input);
  assert.deepEqual([s.broker.url, s.db], ['mqtt://127.0.0.1:1884', 'postgres://console@127.0.0.1:5432/console']);
  assert.deepEqual(splitListen(s.listen), { host: '::1', port: 9000 });
});
