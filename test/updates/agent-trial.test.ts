/**
 * The running agent's side of a release's trial (src/updates/trial/agent-trial.ts): its update
 * events carry the rollout that offered the version, which is how `qrvend fleet update` follows a
 * machine (the field test found them all with rolloutId null, so a rollout never saw its outcome).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchReleaseTrial } from '../../src/updates/trial/agent-trial.js';
import { rolledBackFile } from '../../src/updates/trial/release-trial.js';
import { updateFiles } from '../../src/updates/files.js';
import { writeUpdateState } from '../../src/updates/state-file.js';
import { silentLogger } from '../../src/core/log.js';
import { testKey } from '../fleet/support/operator-keys.js';
import { makeRelease } from './support/release-fixture.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const key = testKey('rel', ['update']);

function setUp(version: string, rolloutId: string | null) {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-agent-trial-'));
  const updates = join(dir, 'updates');
  mkdirSync(updates);
  const r = makeRelease(dir, { version, arch: 'arm64', key });
  writeUpdateState(updates, {
    v: 1,
    version,
    rolloutId,
    url: 'https://repo.example/a.tgz',
    manifest: r.manifest,
    state: 'waiting',
    fetched: r.manifest.size,
    detail: null,
    at: new Date().toISOString(),
  });
  const published: Array<{ state: string; version: string; rolloutId: string | null }> = [];
  const watch = (running: string) =>
    watchReleaseTrial({
      version: running,
      updatesDir: updates,
      trialFile: join(dir, 'trial.json'),
      log: silentLogger(),
      alarm: () => {},
      publish: (state, v, _detail, rollout) => published.push({ state, version: v, rolloutId: rollout }),
    });
  return { dir, updates, published, watch, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('the trial and healthy events of a release carry the rollout id of the offer that brought it', T, () => {
  const s = setUp('0.3.0', 'rollout-7');
  try {
    writeFileSync(join(s.dir, 'trial.json'), '{"version":"0.3.0","previous":"0.2.0","runs":1}\n');
    const w = s.watch('0.3.0');
    w.healthy();
    assert.deepEqual(s.published, [
      { state: 'trial', version: '0.3.0', rolloutId: 'rollout-7' },
      { state: 'healthy', version: '0.3.0', rolloutId: 'rollout-7' },
    ]);
  } finally {
    s.done();
  }
});

test('the rolled-back event carries the rollout id too; a version the update state does not name gets none', T, () => {
  const s = setUp('0.3.0', 'rollout-7');
  try {
    writeFileSync(
      rolledBackFile(s.updates),
      '{"version":"0.3.0","previous":"0.2.0","at":"2026-11-26T08:00:00Z","reason":"the ' +
        'trial start ended before it was confirmed healthy (exit-code, exited 1)"}\n',
    );
    s.watch('0.2.0');
    assert.deepEqual(s.published, [{ state: 'rolled-back', version: '0.3.0', rolloutId: 'rollout-7' }]);
    rmSync(updateFiles(s.updates).state);
    writeFileSync(join(s.dir, 'trial.json'), '{"version":"0.4.0","previous":"0.3.0","runs":1}\n');
    s.watch('0.4.0');
    assert.deepEqual(s.published.at(-1), { state: 'trial', version: '0.4.0', rolloutId: null });
  } finally {
    s.done();
  }
});

test(
  'a damaged state file, or a rollout id that is not one, gives events ' +
    'with no rollout id (read by hand: the main thread loads no zod)',
  T,
  () => {
    const s = setUp('0.3.0', 'rollout-7');
    try {
      writeFileSync(join(s.dir, 'trial.json'), '{"version":"0.3.0","previous":"0.2.0","runs":1}\n');
      writeFileSync(updateFiles(s.updates).state, JSON.stringify({ v: 1, version: '0.3.0', rolloutId: 'a"b;rm -rf' }));
      s.watch('0.3.0');
      writeFileSync(updateFiles(s.updates).state, '{"v":1,"version":"0.3.0","rolloutId":');
      s.watch('0.3.0');
      assert.deepEqual(
        s.published.map((p) => p.rolloutId),
        [null, null],
      );
    } finally {
      s.done();
    }
  },
);
