/**
 * The trial of a new release (docs/decisions/remote-updates-rollout.md item 5, docs/releases.md), end to end on the
 * agent's side:
 * the real daemon (`qrvend run`) with the VMC simulator on a pty pair, the gateway simulator and
 * a real MQTT broker (aedes), and the unit's root side (packaging/qrvend-release.sh, its
 * ExecStopPost line read from systemd/qrvend.service) on a scratch root (DPKG_ROOT) whose
 * /opt/qrvend/current is this checkout's version, on trial after 0.0.9. The activation itself
 * (extracting a verified tarball) is test/scripts/qrvend-release.test.ts; the daemon here is the
 * checkout's, whatever `current` says.
 *
 * One daemon at a time for the file; tests run in order.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createRig, until, type AgentProcess, type Rig } from '../../../rigs/rig.js';
import { startAedesBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { RESTART_EXIT_CODE } from '../../../src/fleet/machine-link/config-change.js';
import { VERSION } from '../../../src/core/version.js';
import {
  RELEASE_STATE_DIR_ENV,
  healthyFile,
  rolledBackFile,
  rolledBackReportedFile,
} from '../../../src/updates/trial/release-trial.js';
import { OPERATOR_SCOPES, testKey, writeTrustFile } from '../support/operator-keys.js';
import { PREFIX, startWatcher, type FleetWatcher } from './support/fleet-watcher.js';
import { REPO, runScript, type ScriptRun } from '../../scripts/helpers.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MACHINE = 'M-RELEASE-1';
const PREVIOUS = '0.0.9';

let broker: TestBroker;
let rig: Rig;
let watcher: FleetWatcher;
let root: string;
let updatesDir: string;
const operator = testKey('ops-release', OPERATOR_SCOPES);
const trialFile = () => join(root, 'var/lib/qrvend-release/trial.json');
const current = () => readlinkSync(join(root, 'opt/qrvend/current'));

before(async () => {
  broker = await startAedesBroker();
  root = mkdtempSync(join(tmpdir(), 'qrvend-release-e2e-'));
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: {
      fleet: {
        url: broker.url,
        topicPrefix: PREFIX,
        machineId: MACHINE,
        protocolVersion: 4,
        healthIntervalS: 5,
        trustFile: writeTrustFile(root, [operator]),
      },
    },
    env: { [RELEASE_STATE_DIR_ENV]: join(root, 'var/lib/qrvend-release') },
  });
  // updates.dir's default: an `updates` folder beside the ledger.
  updatesDir = join(rig.dir, 'updates');
  mkdirSync(updatesDir, { recursive: true });
  watcher = await startWatcher(broker.url, 4, MACHINE, operator);
});

after(async () => {
  await watcher?.close();
  await rig?.close();
  await broker?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** What qrvend-release leaves once it activated this version after PREVIOUS (no agent running). */
async function onTrial(): Promise<void> {
  if (rig.agent !== null) await rig.stopAgent('SIGKILL');
  for (const v of [PREVIOUS, VERSION]) mkdirSync(join(root, 'opt/qrvend/releases', v, 'bin'), { recursive: true });
  for (const [link, v] of [
    ['current', VERSION],
    ['previous', PREVIOUS],
  ] as const) {
    rmSync(join(root, 'opt/qrvend', link), { force: true });
    symlinkSync(`releases/${v}`, join(root, 'opt/qrvend', link));
  }
  mkdirSync(join(root, 'var/lib/qrvend-release'), { recursive: true });
  writeFileSync(trialFile(), `${JSON.stringify({ version: VERSION, previous: PREVIOUS, runs: 1 })}\n`);
  // An activation starts a fresh trial: an earlier trial's healthy mark and rollback report go.
  for (const f of [healthyFile(updatesDir), rolledBackFile(updatesDir)]) rmSync(f, { force: true });
}

/** The unit's ExecStopPost line for qrvend-release, installed paths mapped to the checkout and the rig. */
async function stopPost(agent: AgentProcess): Promise<ScriptRun> {
  const { code, signal } = await agent.exited;
  if (rig.agent === agent) rig.agent = null;
  const line = /^ExecStopPost=-\+(.*)$/m.exec(readFileSync(join(REPO, 'systemd/qrvend.service'), 'utf8'));
  assert.ok(line, 'the unit runs qrvend-release after every stop');
  const argv = line[1]!
    .trim()
    .split(/\s+/)
    .map((w) =>
      w === '/opt/qrvend/bin/qrvend-release'
        ? join(REPO, 'packaging/qrvend-release.sh')
        : w === '/var/lib/qrvend/updates'
          ? updatesDir
          : w,
    );
  const ended =
    signal !== null
      ? { SERVICE_RESULT: 'signal', EXIT_CODE: 'killed', EXIT_STATUS: signal.replace(/^SIG/, '') }
      : { SERVICE_RESULT: code === 0 ? 'success' : 'exit-code', EXIT_CODE: 'exited', EXIT_STATUS: String(code) };
  return runScript(argv[0]!, argv.slice(1), { env: { DPKG_ROOT: root, ...ended }, timeoutMs: 20_000 });
}

test(
  'a healthy trial start (reader enabled, payment side ready, own command topic ' +
    'round trip) writes healthy.json; the stop hook then keeps the release',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    await onTrial();
    const agent = await rig.startAgent();
    // The line comes after the file (written durably first): once it is in, so is the file.
    await agent.waitForLog((l) => l.event === 'update.healthy', 30_000, 'the release confirmed healthy');
    assert.deepEqual(JSON.parse(readFileSync(healthyFile(updatesDir), 'utf8')), { version: VERSION });
    const trial = agent.logs.findIndex((l) => l.event === 'update.trial');
    const returned = agent.logs.findIndex((l) => l.event === 'fleet.probe.returned');
    const healthy = agent.logs.findIndex((l) => l.event === 'update.healthy');
    assert.ok(trial >= 0 && returned > trial && healthy > returned, 'on trial, the probe came back, then healthy');
    // The update events, through the fleet link's durable event queue.
    for (const state of ['trial', 'healthy']) {
      await watcher.waitForEvent(
        (e) => e.kind === 'update' && e.state === state && e.version === VERSION,
        20_000,
        `update event ${state}`,
      );
    }
    await rig.stopAgent('SIGTERM');
    const post = await stopPost(agent);
    assert.equal(post.code, 0, post.stderr);
    assert.match(post.stderr, /passed its trial/);
    assert.equal(existsSync(trialFile()), false);
    assert.equal(current(), `releases/${VERSION}`);
  },
);

test(
  'a trial start that crashes before it is healthy is rolled back by the stop hook; the ' +
    'previous release raises UPDATE_ROLLED_BACK with the reason, and reports it once',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    await onTrial();
    const agent = await rig.startAgentProcessOnly();
    agent.child.kill('SIGKILL');
    const post = await stopPost(agent);
    assert.equal(post.code, 0, post.stderr);
    assert.equal(current(), `releases/${PREVIOUS}`);
    assert.match(readFileSync(rolledBackFile(updatesDir), 'utf8'), /signal, killed KILL/);

    const events = watcher.events.length;
    const back = await rig.startAgent();
    const raised = await watcher.waitForEvent(
      (e) => e.kind === 'alarm' && e.code === 'UPDATE_ROLLED_BACK' && e.state === 'raised',
      30_000,
      'UPDATE_ROLLED_BACK raised',
    );
    assert.match(
      JSON.stringify(raised),
      new RegExp(
        `release ${VERSION.replaceAll('.', '\\.')} was rolled back to ` +
          `${PREVIOUS.replaceAll('.', '\\.')} at .*signal, killed KILL`,
      ),
    );
    assert.ok(watcher.events.indexOf(raised) >= events);
    await back.waitForLog((l) => l.event === 'update.rolled-back', 10_000, 'the rollback in the journal');
    assert.equal(back.logs.filter((l) => l.event === 'update.rolled-back').length, 1);
    const event = await watcher.waitForEvent(
      (e) => e.kind === 'update' && e.state === 'rolled-back' && e.version === VERSION,
      20_000,
      'update event rolled-back',
    );
    assert.match(String((event as { detail?: unknown }).detail), /signal, killed KILL/);
    await until(() => existsSync(rolledBackReportedFile(updatesDir)), 10_000, 'the rollback marked as reported');
    assert.equal(
      existsSync(rolledBackFile(updatesDir)),
      true,
      'the report stays for the update agent; the alarm with it',
    );

    // The next start keeps the alarm (it clears with the next healthy release) but reports nothing again.
    await rig.stopAgent('SIGTERM');
    const statuses = watcher.statuses.length;
    const again = await rig.startAgent();
    await until(
      () =>
        watcher.statuses
          .slice(statuses)
          .some(
            (st) => st.online === true && ((st.alarms as string[] | undefined) ?? []).includes('UPDATE_ROLLED_BACK'),
          ),
      30_000,
      'online again with UPDATE_ROLLED_BACK still raised',
    );
    assert.equal(again.logs.filter((l) => l.event === 'update.rolled-back').length, 0);
    assert.equal(
      watcher.events.filter((e) => e.kind === 'update' && e.state === 'rolled-back').length,
      1,
      'reported once',
    );
    await rig.stopAgent('SIGTERM');
  },
);

test(
  'a trial start its start checks refuse (SecretToken file gone) exits ' +
    '75, not 78, so that systemd restarts it on the previous release',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    await onTrial();
    const tokenFile = join(rig.dir, 'secret-token');
    const token = readFileSync(tokenFile);
    rmSync(tokenFile);
    try {
      const agent = await rig.startAgentProcessOnly();
      const { code } = await agent.exited;
      assert.equal(code, RESTART_EXIT_CODE, agent.stderr.join(''));
      assert.match(
        agent.stderr.join(''),
        new RegExp(`trial start of release ${VERSION.replaceAll('.', '\\.')} failed .*SECRET_UNREADABLE`),
      );
      const post = await stopPost(agent);
      assert.equal(post.code, 0, post.stderr);
      assert.equal(current(), `releases/${PREVIOUS}`);
      assert.match(readFileSync(rolledBackFile(updatesDir), 'utf8'), /exit-code, exited 75/);
    } finally {
      writeFileSync(tokenFile, token, { mode: 0o600 });
    }
  },
);
