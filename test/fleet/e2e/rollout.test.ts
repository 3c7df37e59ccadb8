/**
 * `qrvend fleet update` end to end: the real CLI (a child process) against a real broker and
 * simulated machines that check the offer's signature and the manifest's as a machine does, then
 * play a scripted update (test/fleet/support/rollout-kit.ts). Covered: a rollout where every machine
 * ends healthy (batches grow, skipped machines untouched, fleet status shows the result), a rollout
 * that stops at the failure threshold (later batches never offered), a machine that never answers
 * (a failure at the batch timeout), and a rollout resumed after the operator's process was killed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from '../../../src/sim/wait.js';
import type { RolloutState } from '../../../src/fleet/operator/rollout/index.js';
import { runCli, startCli } from '../operator/run-cli.js';
import { startRolloutFleet, signManifest, RELEASE } from '../support/rollout-kit.js';
import { testKey } from '../support/operator-keys.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const ARTIFACT_URL = 'http://127.0.0.1:9/qrvend_1.1.0_arm64.tar.gz';
const readState = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as RolloutState;

test(
  'every machine healthy: batches grow, each offered once, skipped ' +
    'machines untouched; fleet status shows version and update state',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const fleet = await startRolloutFleet([
      { id: 'a1' },
      { id: 'a2' },
      { id: 'a3' },
      { id: 'a4' },
      { id: 'a5' },
      { id: 'a6', version: '1.1.0' },
      { id: 'a7', arch: 'armhf' },
    ]);
    t.after(() => fleet.close());
    const stateFile = join(fleet.dir, 'rollout.json');
    const r = await runCli(
      [
        'fleet',
        'update',
        '--manifest',
        fleet.manifestFile,
        '--artifact-url',
        ARTIFACT_URL,
        '--all',
        '--first',
        '1',
        '--growth',
        '2',
        '--state',
        stateFile,
        '--rollout-id',
        'r-all',
        ...fleet.baseArgs,
      ],
      120_000,
    );
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(
      r.stdout,
      new RegExp(
        /^rollout r-all: 1\.1\.0 \(arm64, qrvend_1\.1\.0_arm64\.tar\.gz\) to 5 machines /.source +
          /in batches of 1, 2, 2; stops after more than 0 failures/.source,
        'm',
      ),
    );
    assert.match(r.stdout, /^skipped a6: already runs 1\.1\.0$/m);
    assert.match(r.stdout, /^skipped a7: its architecture is armhf, the manifest's arm64$/m);
    // A batch is offered only once the one before it is healthy.
    const out = r.stdout;
    assert.ok(out.indexOf('batch 1: offering to a1') < out.indexOf('  a1  healthy'), out);
    assert.ok(out.indexOf('  a1  healthy') < out.indexOf('batch 2: offering to a2, a3'), out);
    assert.ok(out.indexOf('  a3  healthy') < out.indexOf('batch 3: offering to a4, a5'), out);
    assert.match(out, /^ {2}a2 {2}downloading 4096\/4096 bytes$/m);
    assert.match(out, /^complete: 5 of 5 machines healthy on 1\.1\.0, 0 failed/m);
    assert.match(out, /^5 healthy, 0 failed, 0 in flight, 0 not offered, 2 skipped \(of 7 machines asked for\)$/m);
    for (const id of ['a1', 'a2', 'a3', 'a4', 'a5']) assert.equal(fleet.offers.get(id), 1, `offers to ${id}`);
    assert.equal(fleet.offers.get('a6'), undefined);
    assert.equal(fleet.offers.get('a7'), undefined);
    const saved = readState(stateFile);
    assert.equal(saved.ended?.how, 'complete');
    assert.deepEqual(
      saved.batches.map((b) => b.machineIds),
      [['a1'], ['a2', 'a3'], ['a4', 'a5']],
    );

    const status = await runCli(['fleet', 'status', '--url', fleet.broker.url]);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^MACHINE +ONLINE +VERSION +READER +GATEWAY +LAST SALE +OUTBOX p\/d +UPDATE +ALARMS$/m);
    assert.match(status.stdout, /^a1 +yes +1\.1\.0 +enabled +online +- +0\/0 +healthy 1\.1\.0 +-$/m);
    assert.match(status.stdout, /^a7 +yes +1\.0\.0 +enabled +online +- +0\/0 +- +-$/m);
    assert.match(status.stdout, /^versions: 1\.1\.0 x6, 1\.0\.0 x1$/m);

    // A damaged rollout file is refused (exit 74), and so are contradictory
    // options (exit 64), before anything is offered.
    const damaged = join(fleet.dir, 'damaged.json');
    writeFileSync(damaged, JSON.stringify({ ...saved, targets: 'all' }));
    const bad = await runCli(['fleet', 'update', '--resume', damaged, ...fleet.baseArgs]);
    assert.equal(bad.code, 74, bad.stderr);
    assert.match(bad.stderr, /FLEET_ROLLOUT_FILE: the rollout file .*damaged\.json is not a rollout: targets: /);
    const both = await runCli([
      'fleet',
      'update',
      '--manifest',
      fleet.manifestFile,
      '--artifact-url',
      ARTIFACT_URL,
      '--all',
      '--machines',
      'a1',
      ...fleet.baseArgs,
    ]);
    assert.equal(both.code, 64, both.stderr);
    assert.match(both.stderr, /give either --machines a,b,c or --all/);
    const plain = await runCli([
      'fleet',
      'update',
      '--manifest',
      fleet.manifestFile,
      '--artifact-url',
      'http://updates.example.com/a.tar.gz',
      '--all',
      ...fleet.baseArgs,
    ]);
    assert.equal(plain.code, 64, plain.stderr);
    assert.match(plain.stderr, /--artifact-url must be https:\/\//);

    // Done is done: running the file again offers nothing.
    const again = await runCli(['fleet', 'update', '--resume', stateFile, ...fleet.baseArgs]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /this rollout ended .* \(complete\)/);
    assert.equal(fleet.offers.get('a1'), 1);
  },
);

test(
  'failures past the threshold stop the rollout: later batches are never offered',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const fleet = await startRolloutFleet([
      { id: 'b1', behaviour: { kind: 'roll-back' } },
      { id: 'b2', behaviour: { kind: 'fail' } },
      { id: 'b3', behaviour: { kind: 'refuse' } },
      { id: 'b4' },
      { id: 'b5' },
      { id: 'b6' },
    ]);
    t.after(() => fleet.close());
    const stateFile = join(fleet.dir, 'rollout.json');
    const r = await runCli(
      [
        'fleet',
        'update',
        '--manifest',
        fleet.manifestFile,
        '--artifact-url',
        ARTIFACT_URL,
        '--machines',
        'b1,b2,b3,b4,b5,b6',
        '--first',
        '1',
        '--growth',
        '3',
        '--max-failures',
        '1',
        '--state',
        stateFile,
        ...fleet.baseArgs,
      ],
      120_000,
    );
    assert.equal(r.code, 1, `${r.stdout}\n${r.stderr}`);
    // One failure is within the threshold: the rollout goes on.
    assert.match(r.stdout, /^ {2}b1 {2}ROLLED-BACK: not healthy within 60 s \(simulated\)$/m);
    assert.match(r.stdout, /^batch 2: offering to b2, b3, b4$/m);
    // The second stops it at once, whatever else of the batch is still under way.
    assert.match(r.stdout, /^ {2}b3 {2}REFUSED: refused by the simulation \(behaviour refuse\)$/m);
    assert.match(r.stdout, /^STOPPED: [23] failures, more than the 1 allowed \(--max-failures\)/m);
    assert.doesNotMatch(r.stdout, /batch 3/);
    assert.equal(fleet.offers.get('b5'), undefined, 'b5 was offered');
    assert.equal(fleet.offers.get('b6'), undefined, 'b6 was offered');
    const saved = readState(stateFile);
    assert.equal(saved.ended?.how, 'stopped');
    assert.deepEqual(
      saved.targets.filter((x) => x.phase === 'pending').map((x) => x.machineId),
      ['b5', 'b6'],
    );
    // A stopped rollout stays stopped: resuming it offers nothing more.
    const again = await runCli(['fleet', 'update', '--resume', stateFile, ...fleet.baseArgs]);
    assert.equal(again.code, 1, again.stderr);
    assert.equal(fleet.offers.get('b5'), undefined);
  },
);

test(
  'a machine that never answers counts as a failure at the batch timeout; the rollout goes on within the threshold',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const fleet = await startRolloutFleet([{ id: 'c1', behaviour: { kind: 'silent' } }, { id: 'c2' }, { id: 'c3' }]);
    t.after(() => fleet.close());
    const stateFile = join(fleet.dir, 'rollout.json');
    const r = await runCli(
      [
        'fleet',
        'update',
        '--manifest',
        fleet.manifestFile,
        '--artifact-url',
        ARTIFACT_URL,
        '--machines',
        'c1,c2,c3',
        '--first',
        '2',
        '--growth',
        '1',
        '--max-failures',
        '1',
        '--batch-timeout',
        '3',
        '--reply-timeout',
        '1000',
        '--state',
        stateFile,
        '--json',
        ...fleet.baseArgs,
      ],
      120_000,
    );
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const records = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; machineId?: string; state?: string; detail?: string });
    assert.ok(records.some((x) => x.type === 'state' && x.machineId === 'c1' && x.state === 'no-reply'));
    assert.ok(
      records.some(
        (x) =>
          x.type === 'state' &&
          x.machineId === 'c1' &&
          x.state === 'timed-out' &&
          /no outcome within 3 s/.test(x.detail ?? ''),
      ),
    );
    const summary = records.at(-1) as unknown as {
      type: string;
      tally: { healthy: number; failed: number };
      targets: { machineId: string; outcome: string }[];
    };
    assert.equal(summary.type, 'summary');
    assert.deepEqual(summary.tally, { targets: 3, healthy: 2, failed: 1, inFlight: 0, notOffered: 0, skipped: 0 });
    assert.equal(summary.targets.find((x) => x.machineId === 'c1')?.outcome, 'timed-out');
    assert.equal(fleet.offers.get('c3'), 1);
  },
);

test(
  "resumed after the operator's process was killed: outcomes reached " +
    'meanwhile are taken from the retained statuses, nothing is offered twice',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const fleet = await startRolloutFleet([
      { id: 'd1', behaviour: { kind: 'held', release: held } },
      { id: 'd2' },
      { id: 'd3' },
    ]);
    t.after(() => fleet.close());
    t.after(() => release());
    const stateFile = join(fleet.dir, 'rollout.json');
    const first = startCli([
      'fleet',
      'update',
      '--manifest',
      fleet.manifestFile,
      '--artifact-url',
      ARTIFACT_URL,
      '--machines',
      'd1,d2,d3',
      '--first',
      '1',
      '--state',
      stateFile,
      ...fleet.baseArgs,
    ]);
    t.after(() => void first.child.kill('SIGKILL'));
    await until(() => /^ {2}d1 {2}trial$/m.test(first.out()), 60_000, 'd1 on trial');
    // The laptop closes: no goodbye, no last write.
    first.child.kill('SIGKILL');
    await first.exited;
    assert.equal(readState(stateFile).ended, null);
    release();
    await until(
      () => fleet.machines.get('d1')!.status.update?.state === 'healthy',
      30_000,
      'd1 healthy while the operator is away',
    );

    const resumed = await runCli(['fleet', 'update', '--resume', stateFile, ...fleet.baseArgs], 120_000);
    assert.equal(resumed.code, 0, `${resumed.stdout}\n${resumed.stderr}`);
    assert.match(resumed.stdout, /^resuming /m);
    assert.match(resumed.stdout, /^ {2}d1 {2}healthy$/m);
    assert.match(resumed.stdout, /^batch 2: offering to d2, d3$/m);
    assert.match(resumed.stdout, /^complete: 3 of 3 machines healthy/m);
    assert.deepEqual([...fleet.offers.entries()].sort(), [
      ['d1', 1],
      ['d2', 1],
      ['d3', 1],
    ]);
  },
);

test(
  'Ctrl-C keeps the state and says how to resume; an offer the ' +
    'machines refuse as unsigned by a trusted key is a failure',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const fleet = await startRolloutFleet([{ id: 'e1', behaviour: { kind: 'held', release: held } }, { id: 'e2' }]);
    t.after(() => fleet.close());
    t.after(() => release());
    const stateFile = join(fleet.dir, 'rollout.json');
    const run = startCli([
      'fleet',
      'update',
      '--manifest',
      fleet.manifestFile,
      '--artifact-url',
      ARTIFACT_URL,
      '--machines',
      'e1,e2',
      '--state',
      stateFile,
      ...fleet.baseArgs,
    ]);
    t.after(() => void run.child.kill('SIGKILL'));
    await until(() => /^ {2}e1 {2}trial$/m.test(run.out()), 60_000, 'e1 on trial');
    run.child.kill('SIGINT');
    assert.equal(await run.exited, 130, run.err());
    assert.match(
      run.err(),
      new RegExp(`resume with: qrvend fleet update --resume ${stateFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `),
    );
    assert.match(run.out(), /^interrupted: interrupted by the operator\nstill in flight .*: e1$/m);

    // A key the machines do not trust: the offer is refused with UNAUTHORIZED, counted as a failure.
    const stranger = testKey('stranger', ['update']);
    const strangerFile = join(fleet.dir, 'stranger.pem');
    writeFileSync(strangerFile, stranger.privatePem, { mode: 0o600 });
    const manifestFile = join(fleet.dir, 'stranger.manifest.json');
    writeFileSync(manifestFile, JSON.stringify(signManifest(stranger, { ...RELEASE, version: '1.2.0' })));
    const refused = await runCli(
      [
        'fleet',
        'update',
        '--manifest',
        manifestFile,
        '--artifact-url',
        ARTIFACT_URL,
        '--machines',
        'e2',
        '--state',
        join(fleet.dir, 'r2.json'),
        '--url',
        fleet.broker.url,
        '--sign-key',
        strangerFile,
        '--key-id',
        'stranger',
      ],
      120_000,
    );
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(
      refused.stdout,
      /^ {2}e2 {2}REFUSED: UNAUTHORIZED: refused \(unknown-key\): the key stranger is not trusted here$/m,
    );
  },
);
