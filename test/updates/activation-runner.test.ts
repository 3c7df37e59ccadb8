/**
 * The activation runner (src/updates/activation-runner.ts) with a stand-in
 * payment worker: files written, exits asked for.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startActivationRunner } from '../../src/updates/activation-runner.js';
import { updateFiles } from '../../src/updates/files.js';
import { until } from '../../rigs/rig.js';
import type { MainToPayment } from '../../src/ipc/messages.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

function setup(t: { after(fn: () => void): void }, dir?: string) {
  const root = mkdtempSync(join(tmpdir(), 'qrvend-runner-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const sent: MainToPayment[] = [];
  const restarts: string[] = [];
  let readerBusy: string | null = null;
  const runner = startActivationRunner({
    dir: dir ?? join(root, 'updates'),
    maxDeferralMs: 60_000,
    readerBusy: () => readerBusy,
    toPayment: (m) => sent.push(m),
    restart: (reason) => restarts.push(reason),
    log: quiet,
    monotonicNow: () => performance.now(),
  });
  t.after(() => runner.stop());
  return {
    root,
    dir: dir ?? join(root, 'updates'),
    sent,
    restarts,
    runner,
    setReader: (b: string | null) => (readerBusy = b),
  };
}

const holds = (sent: MainToPayment[]) =>
  sent.filter((m): m is Extract<MainToPayment, { type: 'update.hold' }> => m.type === 'update.hold').map((m) => m.hold);

test(
  'an update: asked for idle, held, looked at again, then activate.json, the activating event and the restart',
  T,
  async (t) => {
    const h = setup(t);
    assert.deepEqual(
      h.sent,
      [{ type: 'fleet.observe', code: 'UPDATE_DEFERRED', active: false, detail: null }],
      'a deferral from before the restart is cleared',
    );
    h.runner.request({ kind: 'update', version: '9.1.0', rolloutId: 'r' });
    await until(() => holds(h.sent).length > 0, 5_000, 'asked');
    h.setReader('reader session');
    h.runner.activity(null, false); // the payment side is idle, the reader is not
    assert.ok(!holds(h.sent).includes(true), 'nothing held during a session');
    h.setReader(null);
    h.runner.activity(null, false);
    assert.equal(holds(h.sent).at(-1), true, 'idle: new sessions held off');
    assert.equal(existsSync(updateFiles(h.dir).activate), false, 'not before the hold is confirmed');
    h.runner.activity(null, true);
    assert.deepEqual(h.restarts, ['activating update 9.1.0']);
    const request = JSON.parse(readFileSync(updateFiles(h.dir).activate, 'utf8'));
    assert.equal(request.version, '9.1.0');
    assert.equal(request.rolloutId, 'r');
    assert.ok(
      h.sent.some((m) => m.type === 'update.event' && m.event.state === 'activating' && m.event.version === '9.1.0'),
    );
  },
);

test('restart.json: a restart at the next idle moment, the file consumed, nothing activated', T, async (t) => {
  const h = setup(t);
  mkdirSync(h.dir, { recursive: true });
  writeFileSync(updateFiles(h.dir).restart, JSON.stringify({ version: '9.0.1' }));
  await until(() => holds(h.sent).length > 0, 5_000, 'the request seen');
  h.runner.activity('outbox delivery in flight', false);
  assert.deepEqual(h.restarts, []);
  h.runner.activity(null, false);
  h.runner.activity(null, true);
  assert.deepEqual(h.restarts, ['restart requested by the installed package']);
  assert.equal(existsSync(updateFiles(h.dir).restart), false);
  assert.equal(existsSync(updateFiles(h.dir).activate), false);
});

test('an activation request that cannot be written: sessions let go, no restart', T, async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'qrvend-runner-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const blocked = join(root, 'not-a-dir');
  writeFileSync(blocked, 'a file where the updates directory should be');
  const h = setup(t, blocked);
  h.runner.request({ kind: 'update', version: '9.1.0', rolloutId: null });
  h.runner.activity(null, false);
  h.runner.activity(null, true);
  assert.deepEqual(h.restarts, []);
  assert.equal(holds(h.sent).at(-1), false);
});
