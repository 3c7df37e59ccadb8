/**
 * mdb.profile, mdb.device and mdb.boardKeys (docs/decisions/real-vending-machines.md items 2 to 4): presets under
 * explicit keys.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import { isQrvendError } from '../../src/core/errors.js';
import { overridesOf, PROFILES } from '../../src/config/mdb-profiles.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const mdbOf = (mdb: object) => loadConfig({ env: {}, overrides: { mdb } as never }).config.mdb;

test('the default profile keeps what qrvend did before profiles: always-idle, cashless #1, no refresh', T, () => {
  const m = mdbOf({});
  assert.equal(m.profile, 'level3-always-idle');
  assert.equal(m.device, 'cashless1');
  assert.equal(m.alwaysIdle, true);
  assert.equal(m.virtualCredit, null);
  assert.equal(m.maxResponseTimeS, 60);
  assert.equal(m.sessionRefreshMs, null);
  assert.equal(m.multiVend, true);
  assert.deepEqual(overridesOf(m.profile, m), []);
});

test('a profile supplies defaults; every explicit key wins over it', T, () => {
  const p = mdbOf({ profile: 'level2-session', virtualCredit: 5 });
  assert.equal(p.alwaysIdle, false);
  assert.equal(p.sessionRefreshMs, PROFILES['level2-session'].sessionRefreshMs);
  assert.equal(
    p.maxResponseTimeS,
    60,
    'the advertised response time must leave the Dynamic QR budget of the default config',
  );
  assert.equal(p.virtualCredit, 5);
  const o = mdbOf({ profile: 'level2-session', alwaysIdle: true, maxResponseTimeS: 90, sessionRefreshMs: null });
  assert.equal(o.alwaysIdle, true);
  assert.equal(o.maxResponseTimeS, 90);
  assert.equal(o.sessionRefreshMs, null);
  assert.deepEqual(overridesOf(o.profile, o), ['alwaysIdle', 'maxResponseTimeS', 'sessionRefreshMs']);
});

test('an unknown profile, device or board key name is refused, naming the key', T, () => {
  for (const [mdb, path] of [
    [{ profile: 'level4' }, 'mdb.profile'],
    [{ device: 'cashless3' }, 'mdb.device'],
    [{ boardKeys: { address: 'MDB ADDR' } }, 'mdb.boardKeys'],
    [{ boardKeys: { nonsense: 'x' } }, 'mdb.boardKeys'],
  ] as const) {
    assert.throws(
      () => mdbOf(mdb),
      (err: unknown) => isQrvendError(err) && err.message.includes(path),
      JSON.stringify(mdb),
    );
  }
});

test('every preset is valid with the default configuration', T, () => {
  for (const profile of Object.keys(PROFILES)) assert.equal(mdbOf({ profile }).profile, profile);
});

test('a parsed configuration parses again to itself (the profile resolved into plain keys)', T, () => {
  const config = loadConfig({
    env: {},
    overrides: { mdb: { profile: 'level1-session', virtualCredit: 3 } } as never,
  }).config;
  const again = ConfigSchema.parse(config);
  assert.deepEqual(again.mdb, config.mdb);
});
