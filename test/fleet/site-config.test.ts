/**
 * The site configuration of docs/fleet-operations.md (docs/fleet/mosquitto.conf with the ACL of
 * docs/fleet/mosquitto-acl.conf) runs in mosquitto as written, with only its paths and port moved
 * into a temporary directory: TLS with a private CA, a password file, no anonymous clients. A
 * simulated machine and the real `qrvend fleet` CLI talk through it. mosquitto only
 * (`npm run fleet-test`); openssl makes the certificates.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SimulatedMachine } from '../../rigs/fleet/machine.js';
import { runCli } from './operator/run-cli.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const DOCS = fileURLToPath(new URL('../../../docs/fleet/', import.meta.url));
const opensslPresent = ['/usr/bin/openssl', '/bin/openssl'].some((p) => existsSync(p));
const skip =
  process.env.QRVEND_TEST_BROKER !== 'mosquitto'
    ? 'runs against mosquitto only: npm run fleet-test (QRVEND_TEST_BROKER=mosquitto)'
    : opensslPresent
      ? false
      : 'needs openssl to make the test certificates';

function makeCertificates(dir: string): void {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'site-ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=qrvend test site CA',
  );
  ssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    'broker.key',
    '-out',
    'broker.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  ssl(
    'x509',
    '-req',
    '-in',
    'broker.csr',
    '-CA',
    'site-ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'broker.crt',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  );
}

test(
  'the documented site config: TLS, password file and ACL, with a machine and the operator CLI',
  { skip, timeout: TEST_DEADLINE_MS },
  async (t) => {
    const { startMosquitto } = await import('../../rigs/broker/mosquitto-broker.js');
    const work = mkdtempSync(join(tmpdir(), 'qrvend-fleet-site-'));
    t.after(() => rmSync(work, { recursive: true, force: true }));
    makeCertificates(work);
    const operatorPassword = 'op-Secret-4471';
    writeFileSync(join(work, 'operator-password'), `${operatorPassword}\n`, { mode: 0o600 });
    const site = readFileSync(join(DOCS, 'mosquitto.conf'), 'utf8');
    const broker = await startMosquitto({
      users: [
        { username: 'qrvend-operator', password: operatorPassword },
        { username: 'lobby-01', password: 'lobby-01-pw-93' },
      ],
      acl: readFileSync(join(DOCS, 'mosquitto-acl.conf'), 'utf8'),
      files: {
        'broker.crt': readFileSync(join(work, 'broker.crt')),
        'broker.key': readFileSync(join(work, 'broker.key')),
        'site-ca.crt': readFileSync(join(work, 'site-ca.crt')),
      },
      config: ({ port, dir, user }) =>
        `${site
          .replace(/^listener 8883$/m, `listener ${port} 127.0.0.1`)
          .replaceAll('/etc/mosquitto/certs/', `${dir}/`)
          .replaceAll('/etc/mosquitto/qrvend.passwd', join(dir, 'passwd'))
          .replaceAll('/etc/mosquitto/qrvend.acl', join(dir, 'acl'))
          .replaceAll('/var/lib/mosquitto/', `${dir}/`)}\nuser ${user}\n`,
    });
    t.after(() => broker.close());
    const url = `mqtts://127.0.0.1:${broker.port}`;
    const ca = readFileSync(join(work, 'site-ca.crt'));
    const machine = await SimulatedMachine.connect({
      url,
      machineId: 'lobby-01',
      protocol: 5,
      username: 'lobby-01',
      password: 'lobby-01-pw-93',
      ca,
    });
    t.after(() => machine.client.endAsync(true));
    const auth = [
      '--url',
      url,
      '--ca',
      join(work, 'site-ca.crt'),
      '--username',
      'qrvend-operator',
      '--password-file',
      join(work, 'operator-password'),
    ];

    const status = await runCli(['fleet', 'status', ...auth]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^lobby-01 +yes +sim +enabled +online /m);

    const ping = await runCli(['fleet', 'cmd', 'lobby-01', 'ping', ...auth]);
    assert.equal(ping.code, 0, ping.stderr);
    assert.match(ping.stdout, /^lobby-01 ping: ok/);

    const noCa = await runCli([
      'fleet',
      'status',
      '--url',
      url,
      '--username',
      'qrvend-operator',
      '--password-file',
      join(work, 'operator-password'),
      '--connect-timeout',
      '3000',
    ]);
    assert.equal(noCa.code, 69);
    assert.match(
      noCa.stderr,
      new RegExp(
        /FLEET_BROKER_UNREACHABLE: cannot connect to the broker at /.source +
          /mqtts:\/\/127\.0\.0\.1:\d+: .*(certificate|self.signed)/.source,
        'i',
      ),
    );

    writeFileSync(join(work, 'wrong-password'), 'not-it\n', { mode: 0o600 });
    const wrong = await runCli([
      'fleet',
      'status',
      '--url',
      url,
      '--ca',
      join(work, 'site-ca.crt'),
      '--username',
      'qrvend-operator',
      '--password-file',
      join(work, 'wrong-password'),
    ]);
    assert.equal(wrong.code, 69);
    assert.match(wrong.stderr, /FLEET_BROKER_REFUSED: the broker at mqtts:\/\/127\.0\.0\.1:\d+ refused the connection/);

    for (const r of [status, ping, noCa, wrong]) {
      assert.equal(`${r.stdout}${r.stderr}`.includes(operatorPassword), false, 'the password never appears');
      assert.equal(`${r.stdout}${r.stderr}`.includes('not-it'), false, 'nor a wrong one');
    }
  },
);
