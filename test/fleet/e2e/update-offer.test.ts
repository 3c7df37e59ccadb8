/**
 * update.offer through the real daemon (`qrvend run`), a real MQTT broker (aedes) and an artifact
 * server on loopback HTTPS (a self-signed certificate, trusted through updates.caFile): refusals
 * before anything is fetched (unsigned manifest, a key without the update scope, a downgrade,
 * another architecture), a tampered artifact (fetched, refused, nothing to activate), and an
 * offer during a session: the download is cut half-way and resumes, activation waits for the
 * session's end, then activate.json appears and the daemon exits 75. Then the files of the root
 * side's contract: a refused activation is reported `failed`, and restart.json (a hand-installed
 * package) restarts the agent at an idle moment.
 *
 * One daemon for the file (restarted by the test where it exits); tests run in order.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startTestBroker, type TestBroker } from '../../../rigs/broker/index.js';
import type { CommandReply, FleetEvent } from '../../../src/fleet/contract/messages.js';
import type { UpdateEvent } from '../../../src/fleet/contract/updates.js';
import { machineArch } from '../../../src/updates/manifest.js';
import { VERSION } from '../../../src/core/version.js';
import { PREFIX, protocolFor, startWatcher, type FleetWatcher } from './support/fleet-watcher.js';
import { testKey, writeTrustFile } from '../support/operator-keys.js';
import { makeRelease, type TestRelease } from '../../updates/support/release-fixture.js';
import { startArtifactServer, type ArtifactServer } from '../../updates/support/artifact-server.js';
import { makeSelfSignedCert, type TlsFixture } from '../../gateway/tls-fixture.js';
import { openSession } from '../../e2e/support/static-session.js';
import { waitTx } from '../../e2e/support/e2e-rig.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MACHINE = 'M-UPDATE-1';
const T = { timeout: TEST_DEADLINE_MS };
const ARCH = machineArch() ?? 'amd64';
/** Signs manifests (scope update). */
const release = testKey('rel-2026', ['update']);
/** Signs commands: update.offer needs the update scope too. */
const operator = testKey('ops-upd', ['read', 'update']);
/** An operator key without the update scope (it signs a manifest below: refused). */
const ops = testKey('ops', ['read', 'operate']);

let broker: TestBroker;
let rig: Rig;
let watcher: FleetWatcher;
let scratch: string;
let cert: TlsFixture | null;
let good: TestRelease;
let server: ArtifactServer;
let updatesDir: string;
/** The session that ran while the update was offered (its Cancel is checked after the restart). */
let sessionTx = '';

before(async () => {
  cert = makeSelfSignedCert();
  if (cert === null) return;
  broker = await startTestBroker();
  scratch = mkdtempSync(join(tmpdir(), 'qrvend-update-e2e-'));
  good = makeRelease(scratch, { version: '9.1.0', arch: ARCH, key: release, size: 600_000 });
  const trustFile = writeTrustFile(scratch, [release, operator, ops], 'machine-trust.json');
  // The artifact server cuts the first response half-way: the daemon must resume with Range.
  server = await startArtifactServer({
    body: good.artifactBytes,
    path: `/r/${good.manifest.artifact}`,
    tls: { cert: cert.cert, key: cert.key },
    cutAfter: 250_000,
  });
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: {
      fleet: {
        url: broker.url,
        topicPrefix: PREFIX,
        machineId: MACHINE,
        protocolVersion: protocolFor(broker),
        healthIntervalS: 5,
        trustFile,
      },
      updates: { caFile: cert.certFile, maxDeferralS: 60 },
    },
  });
  updatesDir = join(rig.dir, 'updates');
  watcher = await startWatcher(broker.url, protocolFor(broker), MACHINE, operator);
  await rig.startAgent();
  await until(() => watcher.lastStatus()?.online === true, 10_000, 'the retained status online');
});

after(async () => {
  await watcher?.close();
  await rig?.close();
  await server?.close();
  await broker?.close();
  cert?.cleanup();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const skipWithoutTls = (t: { skip(m: string): void }) =>
  cert === null ? (t.skip('openssl is not installed'), true) : false;

function offer(manifest: unknown, url = server.url, rolloutId = 'roll-1'): Promise<CommandReply> {
  return watcher.command('update.offer', { manifest, url, rolloutId }, 10_000);
}

const updateEvents = (version: string) =>
  watcher.events.filter((e: FleetEvent): e is UpdateEvent => e.kind === 'update' && e.version === version);

function refused(reply: CommandReply, code: string): void {
  assert.equal(reply.ok, false, JSON.stringify(reply));
  assert.match(!reply.ok ? reply.error.message : '', new RegExp(`^update refused: ${code}`), JSON.stringify(reply));
}

test(
  'refused before anything is fetched: unsigned, a key without the update scope, a downgrade, another architecture',
  T,
  async (t) => {
    if (skipWithoutTls(t)) return;
    const before = server.ranges.length;
    // The machine reads machine-trust.json; each makeRelease below writes a fleet-trust.json it never reads.
    const { signature: _signature, ...unsigned } = good.manifest;
    refused(await offer(unsigned), 'UPDATE_SIGNATURE_REFUSED');
    const wrongScope = makeRelease(scratch, { version: '9.1.1', arch: ARCH, key: ops });
    refused(await offer(wrongScope.manifest), 'UPDATE_SIGNATURE_REFUSED');
    const older = makeRelease(scratch, { version: '0.0.9', arch: ARCH, key: release });
    refused(await offer(older.manifest), 'UPDATE_DOWNGRADE');
    const same = makeRelease(scratch, { version: VERSION, arch: ARCH, key: release });
    refused(await offer(same.manifest), 'UPDATE_DOWNGRADE');
    const other = makeRelease(scratch, { version: '9.1.2', arch: ARCH === 'arm64' ? 'amd64' : 'arm64', key: release });
    refused(await offer(other.manifest), 'UPDATE_WRONG_ARCH');
    refused(await offer(good.manifest, 'http://repo.example/x.tar.gz'), 'UPDATE_MANIFEST_INVALID');
    assert.equal(server.ranges.length, before, 'nothing was fetched');
    await watcher.waitForEvent(
      (e) => e.kind === 'update' && e.version === '9.1.2' && e.state === 'refused',
      10_000,
      'the refused event of the other architecture',
    );
    assert.ok(updateEvents('0.0.9').some((e) => e.state === 'refused' && /UPDATE_DOWNGRADE/.test(e.detail ?? '')));
    assert.equal(existsSync(join(updatesDir, 'activate.json')), false);
  },
);

test('a tampered artifact: fetched, refused by its sha256, nothing to activate', T, async (t) => {
  if (skipWithoutTls(t)) return;
  const tampered = Buffer.from(good.artifactBytes);
  tampered[123_456] = tampered[123_456]! ^ 0x01;
  const evil = await startArtifactServer({
    body: tampered,
    path: '/evil.tar.gz',
    tls: { cert: cert!.cert, key: cert!.key },
  });
  t.after(() => evil.close());
  const bait = makeRelease(scratch, { version: '9.0.5', arch: ARCH, key: release, size: good.artifactBytes.length });
  // The bait's manifest describes other bytes: served the tampered copy of `good`, its hash cannot match.
  const reply = await offer(bait.manifest, evil.url, 'roll-evil');
  assert.equal(reply.ok, true, JSON.stringify(reply));
  const failed = await watcher.waitForEvent(
    (e) => e.kind === 'update' && e.version === '9.0.5' && (e.state === 'failed' || e.state === 'verified'),
    30_000,
    'the tampered download ends',
  );
  assert.equal((failed as UpdateEvent).state, 'failed');
  assert.match((failed as UpdateEvent).detail ?? '', /UPDATE_ARTIFACT_MISMATCH/);
  assert.equal((failed as UpdateEvent).rolloutId, 'roll-evil');
  assert.equal(existsSync(join(updatesDir, 'downloads', '9.0.5', 'artifact.tar.gz')), false);
  assert.equal(existsSync(join(updatesDir, 'activate.json')), false);
  assert.equal(rig.agent?.child.exitCode, null, 'still running');
});

test(
  'an offer during a session: the cut download resumes, activation ' +
    'waits for the session end, then activate.json and exit 75',
  T,
  async (t) => {
    if (skipWithoutTls(t)) return;
    const agent = rig.agent!;
    const session = await openSession(rig);
    const seenBefore = updateEvents('9.1.0').length; // the refusals of the first test
    const reply = await offer(good.manifest);
    assert.deepEqual(reply.ok && reply.result, { accepted: true });
    // The same offer again (a resumed rollout): accepted, starts nothing new.
    const again = await offer(good.manifest);
    assert.deepEqual(again.ok && again.result, { accepted: true, already: true });
    await watcher.waitForEvent(
      (e) => e.kind === 'update' && e.version === '9.1.0' && e.state === 'waiting',
      30_000,
      'downloaded, verified, waiting',
    );
    const states = updateEvents('9.1.0')
      .slice(seenBefore)
      .map((e) => e.state);
    assert.deepEqual([...new Set(states)], ['offered', 'downloading', 'verified', 'waiting']);
    assert.ok(
      server.ranges.length >= 2 && server.ranges[0] === null && /^bytes=[1-9]\d*-$/.test(server.ranges[1]!),
      `resumed with Range: ${JSON.stringify(server.ranges)}`,
    );
    assert.deepEqual(readFileSync(join(updatesDir, 'downloads', '9.1.0', 'artifact.tar.gz')), good.artifactBytes);
    // Waiting: the session runs on; nothing is activated while it does.
    await until(
      () => (watcher.lastStatus()?.update as { state?: string } | undefined)?.state === 'waiting',
      10_000,
      'status.update waiting',
    );
    assert.equal(existsSync(join(updatesDir, 'activate.json')), false, 'not during the session');
    assert.equal(agent.child.exitCode, null);
    assert.ok(rig.vmc.endSession());
    const end = await agent.exited;
    rig.agent = null;
    assert.equal(end.code, 75, 'exit 75: systemd restarts it and the root side activates');
    const request = JSON.parse(readFileSync(join(updatesDir, 'activate.json'), 'utf8')) as {
      version: string;
      rolloutId: string | null;
      requestedAt: string;
    };
    assert.equal(request.version, '9.1.0');
    assert.equal(request.rolloutId, 'roll-1');
    assert.ok(
      agent.logs.some((l) => l.event === 'update.activate'),
      'the activation was logged',
    );
    sessionTx = session.txId;
  },
);

test(
  'the next start: a refused activation is reported failed; restart.json restarts the agent at an idle moment',
  T,
  async (t) => {
    if (skipWithoutTls(t)) return;
    // What the root side leaves when it refuses (updsystem): the agent reports it.
    rmSync(join(updatesDir, 'activate.json'));
    writeFileSync(
      join(updatesDir, 'activation-refused.json'),
      JSON.stringify({ version: '9.1.0', reason: 'refused by the test' }),
    );
    const agent = await rig.startAgent();
    const failed = await watcher.waitForEvent(
      (e) => e.kind === 'update' && e.version === '9.1.0' && e.state === 'failed',
      30_000,
      'failed after a refused activation',
    );
    assert.match((failed as UpdateEvent).detail ?? '', /refused by the test/);
    assert.equal(existsSync(join(updatesDir, 'activation-refused.json')), false);
    // The session that ran during the offer ended once, cleanly: one Cancel
    // (nothing was sold), before or after the restart.
    const closed = await waitTx(
      rig,
      sessionTx,
      (x) => x.state === 'cancelled',
      'the Cancel of the session that ran during the offer',
      30_000,
    );
    assert.equal(closed.accepted.Cancel, 1);
    assert.equal(closed.accepted.Settlement, 0);
    // A hand-installed package asks for its restart.
    writeFileSync(join(updatesDir, 'restart.json'), JSON.stringify({ version: '9.2.0' }));
    const end = await agent.exited;
    rig.agent = null;
    assert.equal(end.code, 75);
    assert.equal(existsSync(join(updatesDir, 'restart.json')), false, 'consumed');
    assert.equal(existsSync(join(updatesDir, 'activate.json')), false, 'a restart activates nothing');
  },
);
