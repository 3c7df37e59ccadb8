/**
 * The daemon's main thread loads its configuration in a short-lived worker (src/config/load-off-thread.ts)
 * so that zod and the schema stay out of it: the answer and the errors must be the in-thread
 * loader's, to the byte, since `qrvend run` turns them into exit 78 naming the key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { loadConfigOffThread } from '../../src/config/load-off-thread.js';
import { siteFiles } from './support/site-file.js';
import { isQrvendError, QrvendError } from '../../src/core/errors.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const { scratch, siteFile } = siteFiles('qrvend-load-off-thread-');

function inThreadError(file: string): QrvendError {
  try {
    loadConfig({ file });
  } catch (err) {
    assert.ok(isQrvendError(err));
    return err;
  }
  assert.fail('the in-thread loader accepted it');
}

test('a valid site file: the same checked configuration as the in-thread loader', T, async () => {
  const file = siteFile({
    gateway: { timeoutMs: 1234 },
    mdb: { port: 'sim', sessionIdleTimeoutMs: 20_000 },
    fleet: { configOverlay: join(scratch, 'no-overlay.json') },
  });
  const loaded = await loadConfigOffThread({ file, setRejectedOverlayAside: false });
  assert.deepEqual(loaded, loadConfig({ file }));
  assert.equal(loaded.config.gateway.timeoutMs, 1234);
});

test(
  'an invalid site file: the same QrvendError (code, message, hint, every problem), so exit 78 names the key',
  T,
  async () => {
    const file = siteFile({ gateway: { timeoutMs: -5 }, mdb: { nosuchKey: 1 } });
    const expected = inThreadError(file);
    await assert.rejects(loadConfigOffThread({ file, setRejectedOverlayAside: false }), (err: unknown) => {
      assert.ok(err instanceof QrvendError, `not a QrvendError: ${String(err)}`);
      assert.equal(err.code, 'CONFIG_INVALID');
      assert.equal(err.describe(), expected.describe());
      assert.deepEqual(err.details, expected.details);
      assert.match(err.message, /gateway\.timeoutMs/);
      assert.match(err.message, /mdb\.nosuchKey: unknown key/);
      return true;
    });
  },
);

test('a file that cannot be read or parsed: CONFIG_UNREADABLE and CONFIG_INVALID as in-thread', T, async () => {
  const missing = join(scratch, 'absent.json');
  await assert.rejects(
    loadConfigOffThread({ file: missing, setRejectedOverlayAside: false }),
    (err: unknown) => isQrvendError(err, 'CONFIG_UNREADABLE') && err.describe() === inThreadError(missing).describe(),
  );
  const broken = siteFile('{ "gateway": ');
  await assert.rejects(
    loadConfigOffThread({ file: broken, setRejectedOverlayAside: false }),
    (err: unknown) => isQrvendError(err, 'CONFIG_INVALID') && err.describe() === inThreadError(broken).describe(),
  );
});

test(
  'a rejected fleet overlay is set aside by the worker when asked, and reported as the in-thread loader does',
  T,
  async () => {
    const overlay = join(scratch, 'fleet-config.json');
    const file = siteFile({ mdb: { port: 'sim' }, fleet: { configOverlay: overlay } });
    writeFileSync(overlay, JSON.stringify({ mdb: { sessionIdleTimeoutMs: -1 } }));
    const loaded = await loadConfigOffThread({ file, setRejectedOverlayAside: true });
    assert.equal(loaded.overlay.status, 'rejected');
    assert.equal(loaded.overlay.problems[0]?.path, 'mdb.sessionIdleTimeoutMs');
    assert.ok(loaded.overlay.movedTo !== null && existsSync(loaded.overlay.movedTo), 'moved aside');
    assert.equal(existsSync(overlay), false);
    assert.equal(loaded.config.mdb.port, 'sim', 'runs on the site file');
  },
);
