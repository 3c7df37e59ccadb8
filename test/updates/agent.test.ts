/**
 * The fleet worker's update agent (src/updates/agent.ts) with a loopback
 * artifact server: offers, replacement, restarts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKeyring } from '../../src/trust/keys.js';
import { UpdateAgent, type UpdateAgentOptions } from '../../src/updates/agent.js';
import { machineArch } from '../../src/updates/manifest.js';
import { updateFiles } from '../../src/updates/files.js';
import { readUpdateState } from '../../src/updates/state-file.js';
import { until } from '../../rigs/rig.js';
import type { UpdateEventFacts } from '../../src/ipc/messages.js';
import { testKey } from '../fleet/support/operator-keys.js';
import { makeRelease, type TestRelease } from './support/release-fixture.js';
import { startArtifactServer } from './support/artifact-server.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const ARCH = machineArch() ?? 'amd64';
const key = testKey('rel', ['update']);

function harness(dir: string, release: TestRelease, running = '9.0.0') {
  const events: UpdateEventFacts[] = [];
  const ready: string[] = [];
  const options: UpdateAgentOptions = {
    dir: join(dir, 'updates'),
    keyring: loadKeyring(release.trustFile),
    running,
    caFile: null,
    maxDownloadBytes: 10_000_000,
    emit: (e) => events.push(e),
    ready: (v) => ready.push(v),
    statusChanged: () => {},
    log: { info: () => {}, warn: () => {} },
    wallNow: Date.now,
    monotonicNow: () => performance.now(),
    download: { retryDelayMs: 0 },
  };
  return { events, ready, options, agent: () => new UpdateAgent(options) };
}

test(
  'accepted, downloaded, verified, waiting, handed over; the same offer again starts nothing; an older one is refused',
  T,
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-agent-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const r = makeRelease(dir, { version: '9.1.0', arch: ARCH, key });
    const server = await startArtifactServer({ body: r.artifactBytes, path: '/a.tgz' });
    t.after(() => server.close());
    const h = harness(dir, r);
    const agent = h.agent();
    assert.deepEqual(agent.offer({ manifest: r.manifest, url: server.url, rolloutId: 'x' }), {
      ok: true,
      result: { accepted: true },
    });
    assert.deepEqual(agent.offer({ manifest: r.manifest, url: server.url, rolloutId: 'x' }), {
      ok: true,
      result: { accepted: true, already: true },
    });
    await until(() => h.ready.length === 1, 20_000, 'handed over');
    assert.deepEqual(
      h.events.map((e) => e.state),
      ['offered', 'downloading', 'verified', 'waiting'],
    );
    assert.equal(agent.status()?.state, 'waiting');
    const older = makeRelease(dir, { version: '9.0.5', arch: ARCH, key });
    const refused = agent.offer({ manifest: older.manifest, url: server.url });
    assert.equal(refused.ok, false);
    assert.match(!refused.ok ? refused.message : '', /UPDATE_DOWNGRADE: an update to 9\.1\.0 is under way/);
  },
);

test('a newer offer replaces one under way; the earlier download is removed', T, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-agent-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = makeRelease(dir, { version: '9.1.0', arch: ARCH, key });
  const second = makeRelease(dir, { version: '9.2.0', arch: ARCH, key });
  // The first server never finishes (cuts every response): its download is still under way.
  const slow = await startArtifactServer({ body: first.artifactBytes, path: '/1.tgz', cutAfter: 1000, cuts: 1000 });
  const fast = await startArtifactServer({ body: second.artifactBytes, path: '/2.tgz' });
  t.after(() => Promise.all([slow.close(), fast.close()]));
  const h = harness(dir, second);
  h.options.download = { retryDelayMs: 50 };
  const agent = h.agent();
  assert.equal(agent.offer({ manifest: first.manifest, url: slow.url }).ok, true);
  await until(() => slow.ranges.length >= 2, 10_000, 'the first download under way');
  assert.deepEqual(agent.offer({ manifest: second.manifest, url: fast.url }), {
    ok: true,
    result: { accepted: true, replaces: '9.1.0' },
  });
  await until(() => h.ready.includes('9.2.0'), 20_000, '9.2.0 handed over');
  assert.deepEqual(h.ready, ['9.2.0']);
  assert.equal(existsSync(updateFiles(h.options.dir).download('9.1.0')), false);
  assert.equal(readUpdateState(h.options.dir)?.version, '9.2.0');
  agent.stop();
});

test(
  'after the switch: the new version shows trial, then healthy once ' +
    'healthy.json names it; no event of its own (the trial publishes them)',
  T,
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-agent-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const r = makeRelease(dir, { version: '9.1.0', arch: ARCH, key });
    const server = await startArtifactServer({ body: r.artifactBytes, path: '/a.tgz' });
    t.after(() => server.close());
    const old = harness(dir, r, '9.0.0');
    old.agent().offer({ manifest: r.manifest, url: server.url });
    await until(() => old.ready.length === 1, 20_000, 'handed over');
    // state.json as the agent that asked for the activation left it (`waiting`: the activation is
    // the main thread's); the field test found the status stuck there after a real switch.
    assert.equal(readUpdateState(old.options.dir)?.state, 'waiting');
    const next = harness(dir, r, '9.1.0');
    const agent = next.agent();
    agent.resume();
    assert.equal(agent.status()?.state, 'trial');
    agent.refresh();
    assert.equal(agent.status()?.state, 'trial');
    writeFileSync(updateFiles(next.options.dir).healthy, JSON.stringify({ version: '9.1.0' }));
    agent.refresh();
    assert.equal(agent.status()?.state, 'healthy');
    assert.deepEqual(next.events, []);
    assert.deepEqual(next.ready, []);
  },
);

test(
  'back on the old version after a rollback: the status says rolled-back; a download cut by a restart resumes',
  T,
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-agent-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const r = makeRelease(dir, { version: '9.1.0', arch: ARCH, key });
    const server = await startArtifactServer({ body: r.artifactBytes, path: '/a.tgz', cutAfter: 50_000, cuts: 1 });
    t.after(() => server.close());
    const first = harness(dir, r);
    const a = first.agent();
    first.options.download = { retryDelayMs: 60_000 }; // the cut leaves it waiting: the "restart" comes first
    a.offer({ manifest: r.manifest, url: server.url });
    await until(
      () => server.ranges.length === 1 && (readUpdateState(first.options.dir)?.fetched ?? 0) > 0,
      10_000,
      'part fetched, counted',
    );
    a.stop();
    const second = harness(dir, r);
    const b = second.agent();
    b.resume();
    await until(() => second.ready.length === 1, 20_000, 'resumed and handed over');
    assert.match(server.ranges[1] ?? '', /^bytes=[1-9]/);
    const state = readUpdateState(second.options.dir)!;
    assert.equal(state.fetched, r.artifactBytes.length, 'each byte counted once against the cap');
    writeFileSync(updateFiles(second.options.dir).state, JSON.stringify({ ...state, state: 'activating' }));
    writeFileSync(
      updateFiles(second.options.dir).rolledBack,
      JSON.stringify({ version: '9.1.0', previous: '9.0.0', reason: 'exit at start' }),
    );
    const third = harness(dir, r);
    const c = third.agent();
    c.resume();
    assert.equal(c.status()?.state, 'rolled-back');
    assert.deepEqual(third.ready, [], 'not asked again');
  },
);

test(
  'a refusal left for the release that runs (an activation cut short after the switch, an older root side): ' +
    'not a failure; the rollback is reported as such',
  T,
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-agent-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const r = makeRelease(dir, { version: '9.1.0', arch: ARCH, key });
    const server = await startArtifactServer({ body: r.artifactBytes, path: '/a.tgz' });
    t.after(() => server.close());
    const old = harness(dir, r, '9.0.0');
    old.agent().offer({ manifest: r.manifest, url: server.url, rolloutId: 'roll-7' });
    await until(() => old.ready.length === 1, 20_000, 'handed over');
    const files = updateFiles(old.options.dir);
    writeFileSync(files.state, JSON.stringify({ ...readUpdateState(old.options.dir)!, state: 'activating' }));
    // What qrvend-release of earlier packages wrote at the start after such a cut: 9.1.0 runs, on trial.
    const stale = { version: '9.1.0', at: '2026-11-26T05:00:00Z', reason: 'release 9.1.0 is on trial' };
    writeFileSync(files.activationRefused, JSON.stringify(stale));
    const onTrial = harness(dir, r, '9.1.0');
    const agent = onTrial.agent();
    agent.resume();
    assert.equal(agent.status()?.state, 'trial');
    assert.deepEqual(onTrial.events, [], 'no failed event: the trial publishes its own');
    assert.equal(existsSync(files.activationRefused), false, 'the stale refusal is consumed');
    // The trial then fails: the previous release runs again and says rolled-back, not failed.
    writeFileSync(
      files.rolledBack,
      JSON.stringify({ version: '9.1.0', previous: '9.0.0', reason: 'cut short 3 times' }),
    );
    const back = harness(dir, r, '9.0.0');
    const previous = back.agent();
    previous.resume();
    assert.equal(previous.status()?.state, 'rolled-back');
    assert.equal(readUpdateState(back.options.dir)?.rolloutId, 'roll-7');
    assert.deepEqual(back.ready, [], 'not asked again');
  },
);
