/** doctor's fleet-trust check: the link on without a usable, root-owned trust file is said, never silent. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { fleetTrustCheck } from '../../src/doctor/checks/fleet-trust.js';
import type { DoctorContext } from '../../src/doctor/types.js';
import { testKey, writeTrustFile } from '../fleet/support/operator-keys.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

test('fleet-trust: off, missing, refused, held by someone else, fine', { timeout: TEST_DEADLINE_MS }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-doctor-trust-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const base = loadConfig({ env: {} }).config;
  const run = (fleet: Partial<typeof base.fleet>) =>
    fleetTrustCheck.run({} as DoctorContext, { ...base, fleet: { ...base.fleet, ...fleet } });
  assert.equal((await run({ url: null })).status, 'OK');
  const on = { url: 'mqtts://broker.example:8883' };
  const missing = await run({ ...on, trustFile: join(dir, 'none.json') });
  assert.equal(missing.status, 'WARN');
  assert.match(missing.summary, /every command that needs a signature is refused/);
  const file = writeTrustFile(dir, [testKey('ops', ['read', 'operate'])]);
  chmodSync(file, 0o666);
  assert.equal((await run({ ...on, trustFile: file })).status, 'FAIL');
  chmodSync(file, 0o644);
  const good = await run({ ...on, trustFile: file });
  const root = process.getuid?.() === 0;
  assert.equal(good.status, root ? 'OK' : 'WARN', good.summary);
  assert.match(good.summary, root ? /1 key\(s\): ops \(read, operate\)/ : /not owned by root/);
  writeFileSync(file, JSON.stringify({ keys: [] }));
  assert.match((await run({ ...on, trustFile: file })).summary, /holds no key/);
});
