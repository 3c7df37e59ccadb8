/**
 * docs/decisions/fleet-trust.md item 13: Starts carry the SecretToken, and the seed's transport is HTTPS. A
 * `start.listen` off loopback without `start.certFile` served them in plain HTTP without a word;
 * it is now refused at start (exit 78, CONFIG_INVALID naming start.listen and the way out) unless
 * the site file says a TLS proxy terminates HTTPS in front of the machine (start.behindTlsProxy),
 * and `qrvend doctor` says which of the transports holds. Nothing here listens off loopback:
 * the refusal comes before any socket, and doctor only reads the configuration.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG_PATH, validateConfig } from '../../src/config/load.js';
import { startEndpointTransport } from '../../src/config/schema.js';
import { isQrvendError } from '../../src/core/errors.js';
import { runCli, scratchDir } from './support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const defaults = JSON.parse(readFileSync(DEFAULT_CONFIG_PATH, 'utf8')) as { start: Record<string, unknown> };

/** The defaults with `start` changed, validated: the problems' key paths (empty when valid). */
function problems(start: Record<string, unknown>): string[] {
  try {
    validateConfig({ ...defaults, start: { ...defaults.start, ...start } }, 'test');
    return [];
  } catch (err) {
    if (!isQrvendError(err)) throw err;
    return (err.details?.problems as { path: string }[]).map((p) => p.path);
  }
}

test(
  'config: plain HTTP off loopback is refused unless start.behindTlsProxy; HTTPS and loopback are fine',
  { timeout: TEST_DEADLINE_MS },
  () => {
    for (const listen of ['0.0.0.0:8091', '[::]:8091', '192.168.1.20:8091', 'vending-07.local:8091']) {
      assert.deepEqual(problems({ listen }), ['start.listen'], listen);
      assert.deepEqual(problems({ listen, behindTlsProxy: true }), [], `${listen} behind the proxy`);
      assert.deepEqual(
        problems({ listen, certFile: '/etc/qrvend/start.crt', keyFile: '/etc/qrvend/start.key' }),
        [],
        `${listen} over HTTPS`,
      );
    }
    for (const listen of ['127.0.0.1:8091', '127.8.9.10:8091', '[::1]:8091', 'localhost:8091'])
      assert.deepEqual(problems({ listen }), [], listen);
    assert.deepEqual(problems({ behindTlsProxy: 'yes' }), ['start.behindTlsProxy'], 'only a boolean says it');

    const start = { certFile: null, behindTlsProxy: false };
    assert.equal(startEndpointTransport({ ...start, listen: '0.0.0.0:1' }), 'refused');
    assert.equal(startEndpointTransport({ ...start, listen: '0.0.0.0:1', behindTlsProxy: true }), 'tls-proxy');
    assert.equal(startEndpointTransport({ ...start, listen: '0.0.0.0:1', certFile: '/c' }), 'https');
    assert.equal(startEndpointTransport({ ...start, listen: '[::1]:1' }), 'loopback');
    assert.equal(startEndpointTransport({ ...start, listen: null }), 'none');
  },
);

/** A site file for the CLI: sim serial port, everything in `dir`. */
function site(dir: string, name: string, start: Record<string, unknown>): string {
  const token = join(dir, 'secret-token');
  writeFileSync(token, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  const config = join(dir, `${name}.json`);
  const body = {
    gateway: { baseUrl: 'http://127.0.0.1:9', connectTimeoutMs: 500, timeoutMs: 1000 },
    start: { listen: '127.0.0.1:0', secretTokenFile: token, ...start },
    mdb: { port: 'sim' },
    store: { path: join(dir, 'state', 'ledger.sqlite') },
    gpio: { mode: 'off' },
  };
  writeFileSync(config, JSON.stringify(body), { mode: 0o640 });
  return config;
}

interface DoctorLine {
  id: string;
  status: string;
  summary: string;
}

async function doctorLine(config: string, id: string): Promise<DoctorLine | undefined> {
  const r = await runCli(['doctor', '--json', '--config', config], { timeoutMs: 30_000 });
  return (JSON.parse(r.stdout) as { results: DoctorLine[] }).results.find((x) => x.id === id);
}

test(
  'qrvend run and config check refuse 0.0.0.0 in plain HTTP (exit 78, ' +
    'the key and the way out named); doctor shows the transport',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const scratch = scratchDir('qrvend-start-transport-');
    try {
      const exposed = site(scratch.dir, 'exposed', { listen: '0.0.0.0:18555' });
      for (const args of [
        ['run', '--config', exposed],
        ['config', 'check', exposed],
      ]) {
        const r = await runCli(args, { timeoutMs: 20_000 });
        assert.equal(r.code, 78, `${args[0]}: ${r.stdout}${r.stderr}`);
        assert.match(r.stderr, /CONFIG_INVALID/);
        assert.match(
          r.stderr,
          new RegExp(
            /start\.listen: 0\.0\.0\.0:18555 is not a loopback address and start\.certFile is null: /.source +
              /Starts, SecretToken included, would cross the network in plain HTTP/.source,
          ),
        );
        assert.match(r.stderr, /start\.behindTlsProxy to true in the site file/);
      }
      const refused = await doctorLine(exposed, 'config');
      assert.equal(refused?.status, 'FAIL');
      assert.match(refused?.summary ?? '', /is invalid/);

      const proxied = site(scratch.dir, 'proxied', { listen: '0.0.0.0:18555', behindTlsProxy: true });
      assert.equal((await runCli(['config', 'check', proxied])).code, 0);
      assert.deepEqual(
        { ...(await doctorLine(proxied, 'start-endpoint')) },
        {
          id: 'start-endpoint',
          status: 'OK',
          summary: "plain HTTP on 0.0.0.0:18555 behind the site's TLS proxy (start.behindTlsProxy)",
          title: 'Start endpoint',
          details: { transport: 'tls-proxy', listen: '0.0.0.0:18555', certFile: null, behindTlsProxy: true },
        },
      );

      const key = join(scratch.dir, 'start.key');
      writeFileSync(key, 'not read by doctor', { mode: 0o600 });
      const https = site(scratch.dir, 'https', {
        listen: '0.0.0.0:18555',
        certFile: join(scratch.dir, 'start.crt'),
        keyFile: key,
      });
      assert.equal((await doctorLine(https, 'start-endpoint'))?.summary, 'HTTPS (start.certFile) on 0.0.0.0:18555');

      const loopback = site(scratch.dir, 'loopback', { listen: '127.0.0.1:8091' });
      assert.equal((await doctorLine(loopback, 'start-endpoint'))?.summary, 'plain HTTP on loopback (127.0.0.1:8091)');
    } finally {
      scratch.cleanup();
    }
  },
);
