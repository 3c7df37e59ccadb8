/**
 * An empty or damaged CA, certificate or key file is refused at start, naming its key and file
 * (docs/decisions/smallest-boards.md item 6: a power cut right after provisioning left gateway.caFile empty, and the
 * agent
 * started without a word and failed every gateway call). The start checks for each key, and the
 * real daemon's exit 78.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { loadConfig } from '../../src/config/load.js';
import { startProblems } from '../../src/doctor/start-checks.js';
import { createRig } from '../../rigs/rig.js';
import { makeSelfSignedCert } from '../gateway/tls-fixture.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const tls = makeSelfSignedCert();
const skip = tls === null ? 'openssl is not installed' : false;
// The fixture's directory holds a private key: removed with the file's tests (docs/testing.md, "No litter").
after(() => tls?.cleanup());

function files() {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-pem-'));
  const write = (name: string, content: string | Buffer, mode = 0o600) => {
    const path = join(dir, name);
    writeFileSync(path, content, { mode });
    return path;
  };
  const token = write('secret-token', `${'k'.repeat(64)}\n`);
  const good = { cert: write('cert.pem', tls!.cert, 0o644), key: write('key.pem', tls!.key) };
  // What a cut leaves: nothing, zeros (ext4's delayed allocation), half a certificate.
  const bad = {
    empty: write('empty.pem', ''),
    zeros: write('zeros.pem', Buffer.alloc(512)),
    half: write('half.pem', tls!.cert.subarray(0, Math.floor(tls!.cert.length / 2))),
    garbledCert: write(
      'garbled.pem',
      tls!.cert.toString('latin1').replace(/(-----BEGIN CERTIFICATE-----\n)(.{8})/, '$1AAAAAAAA'),
    ),
  };
  const config = (over: Record<string, unknown>) => {
    const site = write(
      `site-${Math.random().toString(16).slice(2)}.json`,
      JSON.stringify({
        mdb: { port: 'sim' },
        fleet: { configOverlay: join(dir, 'overlay.json') },
        ...over,
        start: { secretTokenFile: token, ...(over.start as object) },
      }),
    );
    return loadConfig({ file: site, env: {} }).config;
  };
  return { dir, good, bad, config, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test(
  'each CA, certificate and key file that is empty or damaged is refused, naming the key and the file',
  { timeout: TEST_DEADLINE_MS, skip },
  () => {
    const f = files();
    try {
      const fleet = (over: Record<string, unknown>) => ({
        fleet: {
          configOverlay: join(f.dir, 'overlay.json'),
          url: 'mqtts://127.0.0.1:8883',
          caFile: f.good.cert,
          certFile: f.good.cert,
          keyFile: f.good.key,
          ...over,
        },
      });
      const gateway = (caFile: string) => ({ gateway: { baseUrl: 'https://gateway.example', caFile } });
      const start = (over: Record<string, unknown>) => ({
        start: { listen: '127.0.0.1:8091', certFile: f.good.cert, keyFile: f.good.key, ...over },
      });
      assert.deepEqual(
        startProblems(f.config({ ...gateway(f.good.cert), ...start({}), ...fleet({}) })),
        [],
        'good files are refused',
      );
      const cases: Array<[Record<string, unknown>, string, string, RegExp]> = [
        [gateway(f.bad.empty), 'gateway.caFile', f.bad.empty, /is empty \(0 bytes\)/],
        [gateway(f.bad.zeros), 'gateway.caFile', f.bad.zeros, /is empty|holds no PEM certificate/],
        [gateway(f.bad.half), 'gateway.caFile', f.bad.half, /holds no PEM certificate/],
        [gateway(f.bad.garbledCert), 'gateway.caFile', f.bad.garbledCert, /certificate 1 of 1 cannot be parsed/],
        [start({ certFile: f.bad.empty }), 'start.certFile', f.bad.empty, /is empty/],
        [start({ keyFile: f.bad.half }), 'start.keyFile', f.bad.half, /is not a PEM private key/],
        [fleet({ caFile: f.bad.empty }), 'fleet.caFile', f.bad.empty, /is empty/],
        [fleet({ certFile: f.bad.garbledCert }), 'fleet.certFile', f.bad.garbledCert, /cannot be parsed/],
        [fleet({ keyFile: f.bad.zeros }), 'fleet.keyFile', f.bad.zeros, /is empty|is not a PEM private key/],
      ];
      for (const [over, key, file, why] of cases) {
        const problems = startProblems(f.config(over));
        assert.equal(problems.length, 1, `${key}: ${JSON.stringify(problems)}`);
        assert.equal(problems[0]!.path, key);
        assert.ok(problems[0]!.reason.startsWith(`${key} ${file} `), problems[0]!.reason);
        assert.match(problems[0]!.reason, why);
        assert.match(problems[0]!.error.hint ?? '', /sync/);
        assert.doesNotMatch(problems[0]!.reason, /BEGIN (EC )?PRIVATE KEY|MII/, 'file content in the reason');
      }
    } finally {
      f.done();
    }
  },
);

test(
  'the daemon refuses an empty gateway.caFile at start: exit 78 naming the key and the file',
  { timeout: TEST_DEADLINE_MS, skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-pem-e2e-'));
    const ca = join(dir, 'gateway-ca.pem');
    writeFileSync(ca, '');
    const rig = await createRig({ config: { gateway: { caFile: ca } } });
    try {
      const agent = await rig.startAgentProcessOnly();
      const exit = await agent.exited;
      assert.equal(exit.code, 78, `exit ${JSON.stringify(exit)}; stderr: ${agent.stderr.join('')}`);
      const said = [...agent.logs.map((l) => JSON.stringify(l)), ...agent.stderr].join('\n');
      assert.match(said, new RegExp(`gateway\\.caFile ${ca.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is empty`));
      assert.ok(!agent.logs.some((l) => l.msg === 'payment worker ready'), 'the agent started anyway');
    } finally {
      await rig.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
