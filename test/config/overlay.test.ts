/**
 * The fleet overlay in the loader: layered last (defaults < site < overlay), only with a site
 * file; a damaged or invalid overlay never stops a start: it is reported with the key path,
 * ignored, and set aside only when the caller asks (the daemon).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { rejectedOverlayFile } from '../../src/config/overlay.js';
import { isQrvendError } from '../../src/core/errors.js';

const T = { timeout: 5_000 };
const scratch = mkdtempSync(join(tmpdir(), 'qrvend-overlay-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;

/** A site file naming its own overlay path; `overlay` is written there as is (string) or as JSON. */
function machine(overlay?: unknown): { site: string; overlay: string } {
  const dir = join(scratch, `m${(n += 1)}`);
  mkdirSync(dir);
  const overlayFile = join(dir, 'state', 'fleet-config.json');
  const site = join(dir, 'config.json');
  writeFileSync(
    site,
    JSON.stringify({
      log: { level: 'warn' },
      mdb: { sessionIdleTimeoutMs: 20_000 },
      fleet: { configOverlay: overlayFile },
    }),
  );
  if (overlay !== undefined) {
    mkdirSync(join(dir, 'state'));
    writeFileSync(overlayFile, typeof overlay === 'string' ? overlay : JSON.stringify(overlay));
  }
  return { site, overlay: overlayFile };
}

test('defaults < site < overlay: the overlay wins where it sets a key, the site file elsewhere', T, () => {
  const m = machine({ mdb: { sessionIdleTimeoutMs: 45_000 } });
  const loaded = loadConfig({ file: m.site, env: {} });
  assert.equal(loaded.config.mdb.sessionIdleTimeoutMs, 45_000);
  assert.equal(loaded.config.log.level, 'warn');
  assert.deepEqual(
    loaded.layers.map((l) => [l.name, l.status]),
    [
      ['defaults', 'applied'],
      ['site', 'applied'],
      ['fleet overlay', 'applied'],
    ],
  );
  assert.deepEqual(loaded.overlay.set, { mdb: { sessionIdleTimeoutMs: 45_000 } });
});

test('a missing overlay is no overlay', T, () => {
  const m = machine();
  const loaded = loadConfig({ file: m.site, env: {} });
  assert.equal(loaded.overlay.status, 'absent');
  assert.equal(loaded.config.mdb.sessionIdleTimeoutMs, 20_000);
});

test('without a site file there is no overlay at all', T, () => {
  const loaded = loadConfig({ env: {} });
  assert.equal(loaded.overlay.status, 'none');
  assert.deepEqual(
    loaded.layers.map((l) => l.name),
    ['defaults'],
  );
});

for (const [what, content, path] of [
  ['bad JSON', '{"mdb": {', '(file)'],
  ['not an object', '[1, 2]', '(file)'],
  ['an unknown key', { mdb: { sessionIdleTimeotMs: 1 } }, 'mdb.sessionIdleTimeotMs'],
  ['a value out of range', { gateway: { timeoutMs: -5 } }, 'gateway.timeoutMs'],
  ['fleet.configOverlay itself', { fleet: { configOverlay: '/tmp/elsewhere.json' } }, 'fleet.configOverlay'],
] as const) {
  test(`an overlay with ${what} is ignored with its key path; the site file and the defaults apply`, T, () => {
    const m = machine(content);
    const loaded = loadConfig({ file: m.site, env: {} });
    assert.equal(loaded.overlay.status, 'rejected');
    assert.deepEqual(
      loaded.overlay.problems.map((p) => p.path),
      [path],
    );
    assert.equal(loaded.config.mdb.sessionIdleTimeoutMs, 20_000);
    assert.equal(loaded.layers.at(-1)?.status, 'rejected');
    assert.ok(existsSync(m.overlay), 'a read-only loader leaves the file where it is');
  });
}

test("the daemon's loader sets a rejected overlay aside as <overlay>.rejected", T, () => {
  const m = machine('{"mdb": ');
  const loaded = loadConfig({ file: m.site, env: {}, setRejectedOverlayAside: true });
  assert.equal(loaded.overlay.movedTo, rejectedOverlayFile(m.overlay));
  assert.equal(existsSync(m.overlay), false);
  assert.equal(readFileSync(rejectedOverlayFile(m.overlay), 'utf8'), '{"mdb": ');
  assert.equal(loadConfig({ file: m.site, env: {} }).overlay.status, 'absent', 'the next start runs without it');
});

test('an invalid site file still stops the start, overlay or not', T, () => {
  const m = machine({ mdb: { sessionIdleTimeoutMs: 45_000 } });
  writeFileSync(m.site, JSON.stringify({ gateway: { timeoutMs: 'soon' } }));
  assert.throws(
    () => loadConfig({ file: m.site, env: {} }),
    (err: unknown) => isQrvendError(err, 'CONFIG_INVALID'),
  );
});

test('a site file naming itself as the overlay is refused (config.set would overwrite it)', T, () => {
  const m = machine();
  writeFileSync(m.site, JSON.stringify({ fleet: { configOverlay: m.site } }));
  assert.throws(
    () => loadConfig({ file: m.site, env: {} }),
    (err: unknown) =>
      isQrvendError(err, 'CONFIG_INVALID') &&
      (err.details?.problems as Array<{ path: string }>)[0]?.path === 'fleet.configOverlay',
  );
});
