import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, layer } from '../../src/config/load.js';
import { siteFiles } from './support/site-file.js';
import { isQrvendError } from '../../src/core/errors.js';

const { siteFile } = siteFiles('qrvend-config-');

function problemsOf(fn: () => unknown): Array<{ path: string; reason: string }> {
  try {
    fn();
  } catch (err) {
    assert.ok(isQrvendError(err), `expected a QrvendError, got ${String(err)}`);
    return err.details?.problems as Array<{ path: string; reason: string }>;
  }
  assert.fail('expected the configuration to be refused');
}

test('the defaults alone are valid and carry every contract key', () => {
  const { config } = loadConfig({ env: {} });
  assert.equal(typeof config.gateway.baseUrl, 'string');
  assert.equal(typeof config.gateway.timeoutMs, 'number');
  assert.match(config.start.listen ?? '', /:\d+$/);
  assert.equal(typeof config.start.integratorName, 'string');
  assert.equal(typeof config.start.secretTokenFile, 'string');
  assert.ok('terminalId' in config.machine && 'uniQr' in config.machine);
  assert.equal(typeof config.mdb.port, 'string');
  assert.equal(config.mdb.baudRate, 115200);
  assert.equal(typeof config.mdb.alwaysIdle, 'boolean');
  assert.equal(typeof config.store.path, 'string');
  assert.ok('framebuffer' in config.display && 'png' in config.display);
  assert.ok(config.staticQr.preauthAmount > 0);
  assert.ok(config.dynamicQr.paymentTimeoutMs > 0);
  assert.equal(config.log.level, 'info');
});

test('a site file is layered over the defaults', () => {
  const file = siteFile({ gateway: { timeoutMs: 1234 }, mdb: { port: 'sim' } });
  const { config } = loadConfig({ file, env: {} });
  assert.equal(config.gateway.timeoutMs, 1234);
  assert.equal(config.mdb.port, 'sim');
  assert.equal(config.gateway.connectTimeoutMs, 3000, 'untouched keys keep their default');
});

test('QRVEND_CONFIG names the site file when --config is absent', () => {
  const file = siteFile({ log: { level: 'debug' } });
  assert.equal(loadConfig({ env: { QRVEND_CONFIG: file } }).config.log.level, 'debug');
});

test('an unknown key is refused with its path', () => {
  const file = siteFile({ gateway: { timeoutMS: 10 }, bogus: 1 });
  const problems = problemsOf(() => loadConfig({ file, env: {} }));
  assert.deepEqual(problems.map((p) => p.path).sort(), ['bogus', 'gateway.timeoutMS']);
  assert.ok(problems.every((p) => p.reason === 'unknown key'));
});

test('a bad value is refused with its path and the reason', () => {
  const file = siteFile({
    gateway: { timeoutMs: 'fast' },
    start: { listen: 'nowhere' },
    machine: { currencyCode: 'euro' },
  });
  const problems = problemsOf(() => loadConfig({ file, env: {} }));
  const byPath = new Map(problems.map((p) => [p.path, p.reason]));
  assert.match(byPath.get('gateway.timeoutMs') ?? '', /number/);
  assert.match(byPath.get('start.listen') ?? '', /host:port/);
  assert.match(byPath.get('machine.currencyCode') ?? '', /ISO 4217/);
});

test('values out of range are refused', () => {
  const file = siteFile({ gateway: { timeoutMs: 5 }, mdb: { baudRate: 1234 } });
  const paths = problemsOf(() => loadConfig({ file, env: {} }))
    .map((p) => p.path)
    .sort();
  assert.deepEqual(paths, ['gateway.timeoutMs', 'mdb.baudRate']);
});

test('the dynamic QR payment timeout must stay below the reader max response time', () => {
  const file = siteFile({ mdb: { maxResponseTimeS: 30 }, dynamicQr: { paymentTimeoutMs: 30000 } });
  const problems = problemsOf(() => loadConfig({ file, env: {} }));
  assert.equal(problems[0]?.path, 'dynamicQr.paymentTimeoutMs');
  assert.match(problems[0]?.reason ?? '', /maxResponseTimeS/);
});

test('CustomData values must hold JSON text', () => {
  const bad = siteFile({ customData: { Machine: 'north' } });
  assert.deepEqual(
    problemsOf(() => loadConfig({ file: bad, env: {} })).map((p) => p.path),
    ['customData.Machine'],
  );
  const good = siteFile({ customData: { Machine: '{"region":"north"}' } });
  assert.equal(loadConfig({ file: good, env: {} }).config.customData.Machine, '{"region":"north"}');
});

test('a file that is not JSON is refused, naming the file', () => {
  const file = siteFile('{ "gateway": ');
  assert.throws(
    () => loadConfig({ file, env: {} }),
    (err: unknown) => isQrvendError(err, 'CONFIG_INVALID') && err.message.includes(file),
  );
});

test('a missing file is refused as unreadable', () => {
  assert.throws(
    () => loadConfig({ file: '/nonexistent/qrvend.json', env: {} }),
    (err: unknown) => isQrvendError(err, 'CONFIG_UNREADABLE'),
  );
});

test('layer merges objects and replaces everything else', () => {
  assert.deepEqual(layer({ a: { b: 1, c: 2 }, d: [1, 2] }, { a: { c: 3 }, d: [9] }), { a: { b: 1, c: 3 }, d: [9] });
  assert.deepEqual(layer({ a: { b: 1 } }, { a: null }), { a: null });
});

test('gateway.baseUrl: https://, or http:// only to a loopback host (docs/decisions/gateway-interface.md)', () => {
  for (const ok of [
    'https://gw.example.com:443',
    'https://10.0.0.5:8443',
    'http://127.0.0.1:8090',
    'http://127.9.9.9',
    'http://[::1]:8090',
    'http://localhost:8090',
  ]) {
    assert.equal(loadConfig({ env: {}, overrides: { gateway: { baseUrl: ok } } }).config.gateway.baseUrl, ok);
  }
  for (const bad of [
    'http://gw.example.com:8090',
    'http://10.0.0.5',
    'http://128.0.0.1',
    'http://127.0.0.1.example.com',
    'http://[::2]:80',
  ]) {
    const problems = problemsOf(() => loadConfig({ env: {}, overrides: { gateway: { baseUrl: bad } } }));
    assert.equal(problems[0]?.path, 'gateway.baseUrl', bad);
    assert.match(problems[0]!.reason, /must be https:\/\//, bad);
  }
});

test('staticQr.verifyAge defaults to true; a catalog item may carry an ageLimit', () => {
  const { config } = loadConfig({ env: {}, overrides: { catalog: { '30': { name: 'Beer', ageLimit: 18 } } } });
  assert.equal(config.staticQr.verifyAge, true);
  assert.equal(config.catalog['30']?.ageLimit, 18);
  assert.equal(
    problemsOf(() => loadConfig({ env: {}, overrides: { staticQr: { verifyAge: 'no' } } }))[0]?.path,
    'staticQr.verifyAge',
  );
});
