/**
 * The files between the agent and the root side of a release's trial (src/updates/trial,
 * docs/releases.md): what the agent accepts from them (bounded, checked, only its own version)
 * and what it leaves. The whole trial with the real daemon: test/fleet/e2e/release-trial.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  RELEASE_STATE_DIR_ENV,
  healthyFile,
  markRolledBackReported,
  readHealthy,
  readReleaseRolledBack,
  readReleaseTrial,
  releaseTrialFile,
  rolledBackFile,
  rolledBackReportedFile,
  writeHealthy,
} from '../../src/updates/trial/release-trial.js';
import { updatesDir } from '../../src/updates/files.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function scratch(): { dir: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-release-trial-'));
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test("where the files are: the root side's state directory, updates.dir or `updates` beside the ledger", T, () => {
  assert.equal(releaseTrialFile({}), '/var/lib/qrvend-release/trial.json');
  assert.equal(releaseTrialFile({ [RELEASE_STATE_DIR_ENV]: '/tmp/r' }), '/tmp/r/trial.json');
  assert.equal(
    updatesDir({ updates: { dir: null }, store: { path: '/var/lib/qrvend/ledger.sqlite' } }),
    '/var/lib/qrvend/updates',
  );
  assert.equal(
    updatesDir({ updates: { dir: '/data/upd' }, store: { path: '/var/lib/qrvend/ledger.sqlite' } }),
    '/data/upd',
  );
});

test(
  "the trial is this start's only when it names the running version; anything else, damaged or oversized, is no trial",
  T,
  () => {
    const s = scratch();
    try {
      const file = join(s.dir, 'trial.json');
      assert.equal(readReleaseTrial('0.2.0', file), null, 'no file');
      writeFileSync(file, '{"version":"0.2.0","previous":"0.1.0","runs":2}\n');
      assert.deepEqual(readReleaseTrial('0.2.0', file), { version: '0.2.0', previous: '0.1.0', runs: 2 });
      assert.equal(readReleaseTrial('0.1.0', file), null, 'the previous release after a rollback is not on trial');
      for (const bad of [
        '{"version":"0.2.0"',
        '{"version":"../0.2.0","previous":"0.1.0","runs":1}',
        `{"version":"0.2.0","previous":"0.1.0","runs":1,"pad":"${'x'.repeat(5000)}"}`,
      ]) {
        writeFileSync(file, bad);
        assert.equal(readReleaseTrial('0.2.0', file), null, bad.slice(0, 40));
      }
    } finally {
      s.done();
    }
  },
);

test(
  "healthy.json names the version, durably; it ends an earlier rollback's " +
    'report; the reported rollback keeps its alarm without a second event',
  T,
  () => {
    const s = scratch();
    try {
      writeFileSync(
        rolledBackFile(s.dir),
        '{"version":"0.2.0","previous":"0.1.0","at":"2026-11-26T05:00:00Z","reason":"the ' +
          'trial start ended before it was confirmed healthy (signal, killed KILL)"}\n',
      );
      const fresh = readReleaseRolledBack(s.dir);
      assert.equal(fresh?.reported, false);
      assert.equal(fresh?.reason, 'the trial start ended before it was confirmed healthy (signal, killed KILL)');
      markRolledBackReported(s.dir, fresh!);
      assert.equal(existsSync(rolledBackFile(s.dir)), true, 'the report stays: the update agent reads it too');
      assert.equal(readReleaseRolledBack(s.dir)?.reported, true);
      // A later rollback (another time) is a new report.
      writeFileSync(
        rolledBackFile(s.dir),
        '{"version":"0.2.1","previous":"0.1.0","at":"2026-11-27T05:00:00Z","reason":"later"}\n',
      );
      assert.equal(readReleaseRolledBack(s.dir)?.reported, false);
      markRolledBackReported(s.dir, readReleaseRolledBack(s.dir)!);

      writeHealthy(s.dir, '0.3.0');
      assert.deepEqual(JSON.parse(readFileSync(healthyFile(s.dir), 'utf8')), { version: '0.3.0' });
      assert.equal(readHealthy(s.dir), '0.3.0');
      assert.equal(existsSync(rolledBackReportedFile(s.dir)), false);
      assert.equal(readReleaseRolledBack(s.dir), null);

      writeFileSync(
        rolledBackFile(s.dir),
        '{"version":"0.2.0","previous":"0.1.0","at":"x","reason":"' + 'r'.repeat(400) + '"}',
      );
      assert.equal(readReleaseRolledBack(s.dir), null, 'a reason longer than the bound is not taken');
    } finally {
      s.done();
    }
  },
);

test(
  'each member is checked (the main thread reads these files without ' +
    'zod): versions, counts, lengths; unknown members are dropped',
  T,
  () => {
    const s = scratch();
    try {
      const file = join(s.dir, 'trial.json');
      const trial = (value: unknown) => (writeFileSync(file, JSON.stringify(value)), readReleaseTrial('0.2.0', file));
      assert.deepEqual(trial({ version: '0.2.0', previous: '0.1.0-rc.1', runs: 0, extra: 'x' }), {
        version: '0.2.0',
        previous: '0.1.0-rc.1',
        runs: 0,
      });
      for (const bad of [
        { version: '0.2.0', previous: 'v0.1.0', runs: 1 },
        { version: '0.2.0', previous: '0.1.0', runs: -1 },
        { version: '0.2.0', previous: '0.1.0', runs: 1.5 },
        { version: '0.2.0', previous: '0.1.0', runs: '1' },
        { version: '0.2.0', previous: '0.1.0' },
        [{ version: '0.2.0', previous: '0.1.0', runs: 1 }],
        null,
      ]) {
        assert.equal(trial(bad), null, JSON.stringify(bad));
      }

      const rolledBack = (value: unknown) => (
        writeFileSync(rolledBackFile(s.dir), JSON.stringify(value)),
        readReleaseRolledBack(s.dir)
      );
      const good = { version: '0.2.0', previous: '0.1.0', at: '2026-11-26T05:00:00Z', reason: 'r'.repeat(300) };
      assert.deepEqual(rolledBack({ ...good, extra: 1 }), { ...good, reported: false });
      for (const bad of [
        { ...good, at: 'a'.repeat(41) },
        { ...good, reason: 'r'.repeat(301) },
        { ...good, previous: '0.1' },
        { ...good, reason: 7 },
        { version: '0.2.0', previous: '0.1.0', at: 'now' },
      ]) {
        assert.equal(rolledBack(bad), null, JSON.stringify(bad).slice(0, 80));
      }

      const healthy = (value: unknown) => (
        writeFileSync(healthyFile(s.dir), JSON.stringify(value)),
        readHealthy(s.dir)
      );
      assert.equal(healthy({ version: '0.2.0', extra: true }), '0.2.0');
      assert.equal(healthy({ version: '0.2' }), null);
      assert.equal(healthy({ version: 2 }), null);
    } finally {
      s.done();
    }
  },
);
