/**
 * packaging/qrvend-trial.sh, the unit's ExecStartPre/ExecStopPost around every start of the agent
 * (docs/decisions/fleet-trust.md item 4): run as systemd runs it, with systemd's variables, on a scratch state
 * directory holding the files config.set leaves (written by the agent's own code, so the two
 * sides agree on names and formats). The agent around it: test/fleet/e2e/config-trial.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, runScript } from './helpers.js';
import {
  applyConfigSet,
  confirmChange,
  pendingFile,
  previousOverlayFile,
  readRolledBack,
  rolledBackFile,
  trialRunFile,
} from '../../src/fleet/machine-link/config-change.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const SCRIPT = join(REPO, 'packaging/qrvend-trial.sh');
const T = { timeout: TEST_DEADLINE_MS };

/** How systemd describes the end of the main process to ExecStopPost (systemd.exec(5)). */
const ENDED = {
  exit75: { SERVICE_RESULT: 'exit-code', EXIT_CODE: 'exited', EXIT_STATUS: '75' },
  exit78: { SERVICE_RESULT: 'exit-code', EXIT_CODE: 'exited', EXIT_STATUS: '78' },
  killed: { SERVICE_RESULT: 'signal', EXIT_CODE: 'killed', EXIT_STATUS: 'KILL' },
  watchdog: { SERVICE_RESULT: 'watchdog', EXIT_CODE: 'dumped', EXIT_STATUS: 'ABRT' },
  stoppedOnRequest: { SERVICE_RESULT: 'success', EXIT_CODE: 'exited', EXIT_STATUS: '0' },
};

function scratch(): { dir: string; overlay: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-trial-'));
  return { dir, overlay: join(dir, 'fleet-config.json'), done: () => rmSync(dir, { recursive: true, force: true }) };
}

const start = (overlay: string) => runScript(SCRIPT, ['start', overlay]);
const stop = (overlay: string, ended: Record<string, string>) => runScript(SCRIPT, ['stop', overlay], { env: ended });

const OLD = '{\n  "mdb": {\n    "sessionIdleTimeoutMs": 45000\n  }\n}\n';
const NEW = '{\n  "start": {\n    "secretTokenFile": "/nonexistent"\n  }\n}\n';

/** What config.set leaves: the old overlay kept, the trial marked, the new overlay in place. */
function changeOnTrial(overlay: string, old: string | null): void {
  if (old !== null) writeFileSync(overlay, old);
  applyConfigSet(overlay, NEW, 30, new Date());
}

test('no change on trial: start and stop do nothing and write nothing', T, async () => {
  const s = scratch();
  try {
    writeFileSync(s.overlay, OLD);
    assert.equal((await start(s.overlay)).code, 0);
    assert.equal((await stop(s.overlay, ENDED.killed)).code, 0);
    assert.equal(readFileSync(s.overlay, 'utf8'), OLD);
    assert.equal(existsSync(trialRunFile(s.overlay)), false);
    assert.equal(existsSync(rolledBackFile(s.overlay)), false);
  } finally {
    s.done();
  }
});

test(
  'the run that accepted the change ends (exit 75): not a trial yet; the next start is counted as the trial',
  T,
  async () => {
    const s = scratch();
    try {
      changeOnTrial(s.overlay, OLD);
      assert.equal((await stop(s.overlay, ENDED.exit75)).code, 0);
      assert.equal(readFileSync(s.overlay, 'utf8'), NEW, 'the change stays for its trial');
      assert.equal(existsSync(pendingFile(s.overlay)), true);
      assert.equal((await start(s.overlay)).code, 0);
      assert.equal(readFileSync(trialRunFile(s.overlay), 'utf8'), '1\n');
      assert.equal(readFileSync(s.overlay, 'utf8'), NEW);
    } finally {
      s.done();
    }
  },
);

for (const [how, ended] of [
  ['exits 75 (a refused start)', ENDED.exit75],
  ['exits 78', ENDED.exit78],
  ['is killed (a crash)', ENDED.killed],
  ['is killed by the watchdog', ENDED.watchdog],
] as const) {
  test(
    `a trial start that ${how} brings the previous overlay back byte for byte, with the rollback mark`,
    T,
    async () => {
      const s = scratch();
      try {
        changeOnTrial(s.overlay, OLD);
        await start(s.overlay);
        const run = await stop(s.overlay, ended);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(readFileSync(s.overlay, 'utf8'), OLD);
        for (const f of [pendingFile(s.overlay), previousOverlayFile(s.overlay), trialRunFile(s.overlay)])
          assert.equal(existsSync(f), false, f);
        const mark = readRolledBack(s.overlay);
        assert.ok(mark !== null && mark.at !== 'unknown', 'the mark is JSON the agent reads');
        assert.match(
          mark.reason,
          new RegExp(
            `ended before it was confirmed healthy \\(${ended.SERVICE_RESULT}, ` +
              `${ended.EXIT_CODE} ${ended.EXIT_STATUS}\\)`,
          ),
        );
        assert.match(run.stderr, /rolled back/, 'said in the journal');
        // The agent's next start finds no trial: start does nothing more.
        assert.equal((await start(s.overlay)).code, 0);
        assert.equal(existsSync(trialRunFile(s.overlay)), false);
      } finally {
        s.done();
      }
    },
  );
}

test('a failed first change (no previous overlay) removes the overlay: back to the site file', T, async () => {
  const s = scratch();
  try {
    changeOnTrial(s.overlay, null);
    assert.equal(existsSync(previousOverlayFile(s.overlay)), false);
    await start(s.overlay);
    await stop(s.overlay, ENDED.exit75);
    assert.equal(existsSync(s.overlay), false);
    assert.notEqual(readRolledBack(s.overlay), null);
  } finally {
    s.done();
  }
});

test('power cuts during the trial are not a failure, three times; the fourth start rolls back', T, async () => {
  const s = scratch();
  try {
    changeOnTrial(s.overlay, OLD);
    // A cut: the start began and no ExecStopPost ever ran.
    for (const n of [1, 2, 3]) {
      assert.equal((await start(s.overlay)).code, 0);
      assert.equal(readFileSync(trialRunFile(s.overlay), 'utf8'), `${n}\n`);
      assert.equal(readFileSync(s.overlay, 'utf8'), NEW, `still on trial after ${n - 1} cuts`);
    }
    const fourth = await start(s.overlay);
    assert.equal(fourth.code, 0);
    assert.equal(readFileSync(s.overlay, 'utf8'), OLD);
    assert.match(readRolledBack(s.overlay)!.reason, /cut short 3 times in a row/);
  } finally {
    s.done();
  }
});

test(
  'a stop on request during the trial is no verdict (counted like a cut); a confirmed trial is left alone',
  T,
  async () => {
    const s = scratch();
    try {
      changeOnTrial(s.overlay, OLD);
      await start(s.overlay);
      await stop(s.overlay, ENDED.stoppedOnRequest);
      assert.equal(readFileSync(s.overlay, 'utf8'), NEW);
      await start(s.overlay);
      assert.equal(readFileSync(trialRunFile(s.overlay), 'utf8'), '2\n');
      // The agent confirms: every trial mark goes, and a crash afterwards is not the change's.
      confirmChange(s.overlay);
      await stop(s.overlay, ENDED.killed);
      assert.equal(readFileSync(s.overlay, 'utf8'), NEW);
      assert.equal(readRolledBack(s.overlay), null);
    } finally {
      s.done();
    }
  },
);

test('a damaged trial count counts against the change; hostile systemd variables stay out of the JSON', T, async () => {
  const s = scratch();
  try {
    changeOnTrial(s.overlay, OLD);
    writeFileSync(trialRunFile(s.overlay), 'x1\n');
    await start(s.overlay);
    assert.equal(readFileSync(s.overlay, 'utf8'), OLD);

    changeOnTrial(s.overlay, OLD);
    await start(s.overlay);
    await stop(s.overlay, { SERVICE_RESULT: 'signal"}\n,{"x":"', EXIT_CODE: '$(reboot)', EXIT_STATUS: '`id`' });
    const mark = JSON.parse(readFileSync(rolledBackFile(s.overlay), 'utf8')) as { reason: string };
    assert.match(mark.reason, /\(signalx, reboot id\)$/);
  } finally {
    s.done();
  }
});

test('usage: an action and an absolute overlay path, or exit 64', T, async () => {
  assert.equal((await runScript(SCRIPT, [])).code, 64);
  assert.equal((await runScript(SCRIPT, ['rollback', '/tmp/x'])).code, 64);
  assert.equal((await runScript(SCRIPT, ['start', 'relative/fleet-config.json'])).code, 64);
});
