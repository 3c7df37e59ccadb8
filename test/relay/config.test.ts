/** The relay's configuration: defaults, every refusal naming its key path, and exit 78 from the CLI. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateRelayConfig } from '../../src/relay/index.js';
import { isQrvendError } from '../../src/core/errors.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const MAIN_JS = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const trust = {
  registryFile: '/etc/qrvend/registry.signed.json',
  trustFile: '/etc/qrvend/trust.json',
  voucherKey: { file: '/etc/qrvend/relay-voucher.pem', keyId: 'relay-1' },
  integrators: [{ name: 'acme-wallet', secretTokenFile: '/etc/qrvend/acme-wallet.token' }],
};
const minimal = { relay: { listen: '127.0.0.1:8443', broker: { url: 'mqtt://127.0.0.1:1883' }, ...trust } };

function problems(value: unknown): string[] {
  try {
    validateRelayConfig(value, 'test');
  } catch (err) {
    assert.ok(isQrvendError(err, 'CONFIG_INVALID'));
    return (err.details!.problems as Array<{ path: string; reason: string }>).map((p) => p.path);
  }
  return [];
}

test('a minimal file gets the documented defaults', T, () => {
  const config = validateRelayConfig(minimal, 'test');
  assert.equal(config.timeoutMs, 5000);
  assert.equal(config.broker.topicPrefix, 'qrvend');
  assert.equal(config.broker.protocolVersion, 5);
  assert.equal(config.certFile, null);
  assert.equal(config.maxInFlightPerMachine, 8);
  assert.deepEqual(config.breaker, { failures: 3, openMs: 15_000 });
  // The newest registry verified is kept there (systemd's StateDirectory=qrvend-relay).
  assert.equal(config.stateDir, '/var/lib/qrvend-relay');
});

test(
  'the registry, the trust file, the voucher key and the integrators are required (docs/decisions/fleet-trust.md: no ' +
    'relay without them)',
  T,
  () => {
    const { registryFile: _r, trustFile: _t, voucherKey: _v, integrators: _i, ...bare } = minimal.relay;
    assert.deepEqual(problems({ relay: bare }).sort(), [
      'relay.integrators',
      'relay.registryFile',
      'relay.trustFile',
      'relay.voucherKey',
    ]);
    assert.deepEqual(problems({ relay: { ...minimal.relay, integrators: [] } }), ['relay.integrators']);
    const twice = [trust.integrators[0], trust.integrators[0]];
    assert.deepEqual(problems({ relay: { ...minimal.relay, integrators: twice } }), ['relay.integrators']);
  },
);

test('unknown keys and bad values are refused with their key path', T, () => {
  assert.deepEqual(problems({ relay: { ...minimal.relay, timeotMs: 1 } }), ['relay.timeotMs']);
  assert.deepEqual(problems({ relay: { ...minimal.relay, timeoutMs: 100 } }), ['relay.timeoutMs']);
  assert.deepEqual(problems({ relay: { ...minimal.relay, broker: { url: 'http://x' } } }), ['relay.broker.url']);
  assert.deepEqual(problems({ relay: { ...minimal.relay, broker: { url: 'mqtts://relay:secret@b:8883' } } }), [
    'relay.broker.url',
  ]);
  assert.deepEqual(problems({ relay: { ...minimal.relay, broker: { url: 'mqtts://b:8883', username: 'relay' } } }), [
    'relay.broker.passwordFile',
  ]);
  assert.deepEqual(problems({ relay: { ...minimal.relay, maxBodyBytes: 100_000 } }), ['relay.maxBodyBytes']);
  assert.deepEqual(problems({ relay: { ...minimal.relay, certFile: '/etc/qrvend/relay.crt' } }), ['relay.keyFile']);
  assert.deepEqual(problems({ other: 1, ...minimal }), ['other']);
});

test('plain HTTP off loopback only when allowed explicitly (behind a TLS-terminating load balancer)', T, () => {
  assert.deepEqual(problems({ relay: { ...minimal.relay, listen: '0.0.0.0:8080' } }), ['relay.listen']);
  assert.deepEqual(problems({ relay: { ...minimal.relay, listen: '0.0.0.0:8080', allowPlainHttp: true } }), []);
  assert.deepEqual(
    problems({ relay: { ...minimal.relay, listen: '0.0.0.0:8443', certFile: '/a.crt', keyFile: '/a.key' } }),
    [],
  );
});

test('qrvend relay exits 78 naming the bad key; --check exits 0 on a good file', T, () => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-relay-config-'));
  try {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ relay: { ...minimal.relay, rateLimit: { perSecond: 0, burst: 1 } } }));
    const refused = spawnSync(process.execPath, [MAIN_JS, 'relay', '--config', bad], {
      encoding: 'utf8',
      timeout: CHILD_DEADLINE_MS,
    });
    assert.equal(refused.status, 78);
    assert.match(refused.stderr, /relay\.rateLimit\.perSecond/);
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify(minimal));
    const checked = spawnSync(process.execPath, [MAIN_JS, 'relay', '--config', good, '--check'], {
      encoding: 'utf8',
      timeout: CHILD_DEADLINE_MS,
    });
    assert.equal(checked.status, 0, checked.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  "the machine's start.listen may be null only with the Start relay reachable (fleet.url set, relayed Starts taken)",
  T,
  async () => {
    const { loadConfig } = await import('../../src/config/load.js');
    const load = (overrides: Record<string, unknown>) => {
      try {
        loadConfig({ env: {}, overrides: overrides as never });
        return [];
      } catch (err) {
        assert.ok(isQrvendError(err, 'CONFIG_INVALID'));
        return (err.details!.problems as Array<{ path: string }>).map((p) => p.path);
      }
    };
    assert.deepEqual(load({ start: { listen: null } }), ['start.listen']);
    assert.deepEqual(
      load({ start: { listen: null }, fleet: { url: 'mqtt://127.0.0.1:1883', acceptRelayedStart: false } }),
      ['start.listen'],
    );
    assert.deepEqual(load({ start: { listen: null }, fleet: { url: 'mqtt://127.0.0.1:1883' } }), []);
  },
);
