/**
 * A release activation cut short by a power cut after the switch, before its request was consumed
 * (docs/releases.md, "What happens on each failure"), seen from the fleet: the scratch root
 * (DPKG_ROOT) as packaging/qrvend-release.sh leaves it at that point, the unit's ExecStartPre line
 * for the script run for real at the next start, then the real daemon (`qrvend run`, this
 * checkout's version, on trial after 0.0.9) with the VMC simulator, the gateway simulator and a
 * real MQTT broker (aedes). The update is reported on trial, then healthy; never failed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startAedesBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { VERSION } from '../../../src/core/version.js';
import { RELEASE_STATE_DIR_ENV } from '../../../src/updates/trial/release-trial.js';
import { writeUpdateState } from '../../../src/updates/state-file.js';
import { machineArch } from '../../../src/updates/manifest.js';
import type { UpdateEvent } from '../../../src/fleet/contract/updates.js';
import { makeRelease } from '../../updates/support/release-fixture.js';
import { OPERATOR_SCOPES, testKey, writeTrustFile } from '../support/operator-keys.js';
import { PREFIX, startWatcher, type FleetWatcher } from './support/fleet-watcher.js';
import { REPO, runScript } from '../../scripts/helpers.js';

const MACHINE = 'M-RELEASE-CUT-1';
const PREVIOUS = '0.0.9';
const ROLLOUT = 'roll-cut-1';

let broker: TestBroker;
let rig: Rig;
let watcher: FleetWatcher;
let root: string;
let updatesDir: string;
const operator = testKey('ops-release-cut', OPERATOR_SCOPES);

before(async () => {
  broker = await startAedesBroker();
  root = mkdtempSync(join(tmpdir(), 'qrvend-release-cut-e2e-'));
  const fleet = { url: broker.url, topicPrefix: PREFIX, machineId: MACHINE, protocolVersion: 4, healthIntervalS: 5 };
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: { fleet: { ...fleet, trustFile: writeTrustFile(root, [operator]) } },
    env: { [RELEASE_STATE_DIR_ENV]: join(root, 'var/lib/qrvend-release') },
  });
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

/** The machine when the power went: VERSION current and on trial, the request and the agent's state left behind. */
function cutAfterSwitch(): void {
  for (const v of [PREVIOUS, VERSION]) mkdirSync(join(root, 'opt/qrvend/releases', v, 'bin'), { recursive: true });
  symlinkSync(`releases/${VERSION}`, join(root, 'opt/qrvend/current'));
  symlinkSync(`releases/${PREVIOUS}`, join(root, 'opt/qrvend/previous'));
  mkdirSync(join(root, 'var/lib/qrvend-release'), { recursive: true });
  const trial = { version: VERSION, previous: PREVIOUS, runs: 1 };
  writeFileSync(join(root, 'var/lib/qrvend-release/trial.json'), `${JSON.stringify(trial)}\n`);
  const request = { version: VERSION, rolloutId: ROLLOUT, requestedAt: '2026-11-26T05:00:00Z' };
  writeFileSync(join(updatesDir, 'activate.json'), JSON.stringify(request));
  // The update agent of PREVIOUS asked for the activation, then exited 75 (state.json: activating).
  const release = makeRelease(root, { version: VERSION, arch: machineArch() ?? 'amd64' });
  const manifest = release.manifest;
  const at = new Date().toISOString();
  const url = 'https://repo.invalid/qrvend.tar.gz';
  const asked = { v: 1, version: VERSION, rolloutId: ROLLOUT, url, manifest, fetched: manifest.size, detail: null, at };
  writeUpdateState(updatesDir, { ...asked, v: 1, state: 'activating' });
}

/** The unit's ExecStartPre line for qrvend-release, installed paths mapped to the checkout and the rig. */
function startPre(): ReturnType<typeof runScript> {
  const unit = readFileSync(join(REPO, 'systemd/qrvend.service'), 'utf8');
  const line = /^ExecStartPre=-\+(\/opt\/qrvend\/bin\/qrvend-release .*)$/m.exec(unit);
  assert.ok(line, 'the unit runs qrvend-release before every start');
  const installed: Record<string, string> = {
    '/opt/qrvend/bin/qrvend-release': join(REPO, 'packaging/qrvend-release.sh'),
    '/var/lib/qrvend/updates': updatesDir,
  };
  const map = (w: string) => installed[w] ?? w;
  const argv = line[1]!.trim().split(/\s+/).map(map);
  return runScript(argv[0]!, argv.slice(1), { env: { DPKG_ROOT: root }, timeoutMs: 20_000 });
}

test(
  "the start after a power cut between the switch and the request's consumption: the release is on trial and " +
    'then healthy, never reported failed',
  { timeout: 300_000 },
  async () => {
    cutAfterSwitch();
    const pre = await startPre();
    assert.equal(pre.code, 0, pre.stderr);
    assert.equal(existsSync(join(updatesDir, 'activate.json')), false, 'the leftover request is consumed');

    const agent = await rig.startAgent();
    const isUpdate = (e: { kind: string }): e is UpdateEvent => e.kind === 'update';
    const healthy = (e: { kind: string }) => isUpdate(e) && e.state === 'healthy' && e.version === VERSION;
    await watcher.waitForEvent(healthy, 40_000, 'the update event healthy');
    const updates = watcher.events.filter(isUpdate).filter((e) => e.version === VERSION);
    assert.deepEqual(
      updates.filter((e) => e.state === 'failed'),
      [],
      'no failed event for the release on trial',
    );
    assert.ok(updates.some((e) => e.state === 'trial'));
    const stateOf = (s: Record<string, unknown>) =>
      (s.update as { state?: string; version?: string } | undefined)?.state;
    await until(() => watcher.statuses.some((s) => stateOf(s) === 'healthy'), 30_000, 'the status says healthy');
    assert.ok(!watcher.statuses.some((s) => stateOf(s) === 'failed'), 'the status never said failed');
    assert.ok(agent.logs.every((l) => l.event !== 'update.failed'));
    await rig.stopAgent('SIGTERM');
  },
);
