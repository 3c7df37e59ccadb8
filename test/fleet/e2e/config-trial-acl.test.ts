/**
 * The trial's round trip on the machine's own command topic (docs/decisions/fleet-trust.md item 4) against mosquitto
 * with the documented ACL (docs/fleet/mosquitto-acl.conf, loaded as it is): the one write it
 * grants a machine on its own command topics (`cmd/_probe`) lets a good change be confirmed, and a
 * change that leaves the machine connected but unreachable (another machineId than its broker
 * account: item 3d of the issue, "silent under both ids and the trial called it healthy") is
 * rolled back. The real daemon; systemd's part played as the unit says (support/unit-runner.ts).
 * mosquitto only: `npm run fleet-test`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRig } from '../../../rigs/rig.js';
import { RESTART_EXIT_CODE, applyConfigSet, pendingFile } from '../../../src/fleet/machine-link/config-change.js';
import { serviceEnded, startService } from './support/unit-runner.js';
import { CHILD_DEADLINE_MS } from '../../support/deadlines.js';

const ACL_FILE = fileURLToPath(new URL('../../../../docs/fleet/mosquitto-acl.conf', import.meta.url));
const skip =
  process.env.QRVEND_TEST_BROKER === 'mosquitto'
    ? false
    : 'runs against mosquitto only: npm run fleet-test (QRVEND_TEST_BROKER=mosquitto)';

test(
  'with the documented ACL a good change is confirmed over the probe; ' +
    'a machineId the broker account does not match is rolled back',
  { skip, timeout: CHILD_DEADLINE_MS },
  async (t) => {
    const { startMosquitto } = await import('../../../rigs/broker/mosquitto-broker.js');
    const user = { username: 'vm-trial', password: 'vm-trial-pw-61' };
    const broker = await startMosquitto({ users: [user], acl: readFileSync(ACL_FILE, 'utf8') });
    t.after(() => broker.close());
    const rig = await createRig({ vmc: { vendPolicy: 'manual' }, config: {} });
    t.after(() => rig.close());
    const passwordFile = join(rig.dir, 'broker-password');
    writeFileSync(passwordFile, `${user.password}\n`, { mode: 0o600 });
    // The site file: the prefix the ACL names, the machine's own account.
    const site = JSON.parse(readFileSync(rig.configFile, 'utf8')) as Record<string, Record<string, unknown>>;
    site.fleet = {
      ...site.fleet,
      url: broker.url,
      topicPrefix: 'qrvend',
      machineId: user.username,
      protocolVersion: 5,
      username: user.username,
      passwordFile,
    };
    writeFileSync(rig.configFile, JSON.stringify(site));

    // What config.set leaves (its own checks are tested in config-trial.test.ts), then its restart.
    const change = async (overlay: unknown) => {
      applyConfigSet(rig.overlayFile, `${JSON.stringify(overlay)}\n`, 5, new Date());
      rig.agent!.child.kill('SIGTERM');
      await serviceEnded(rig, rig.agent!);
    };

    await startService(rig, { ready: true });
    await rig.agent!.waitForLog((l) => l.event === 'fleet.connected', 15_000, 'the fleet link');
    await change({ mdb: { sessionIdleTimeoutMs: 45_000 } });
    const { agent: good } = await startService(rig, { ready: true });
    await good.waitForLog((l) => l.event === 'fleet.config.confirmed', 20_000, 'the change confirmed');
    assert.ok(
      good.logs.some((l) => l.event === 'fleet.probe.returned'),
      'confirmed over the round trip',
    );
    const confirmed = readFileSync(rig.overlayFile);

    // An overlay that moves the machine to another id (the item 3d) can no longer be set,
    // and one written behind the agent's back is rejected when loaded (the allowlist): the previous,
    // confirmed overlay stays, the machine stays on the broker under its own account. (A trial whose
    // probe never comes back is rolled back: config-trial.test.ts, with a broker that withholds it.)
    await change({ mdb: { sessionIdleTimeoutMs: 45_000 }, fleet: { machineId: 'vm-someone-else' } });
    const { agent: trial } = await startService(rig, { ready: true });
    const rejected = await trial.waitForLog(
      (l) => l.code === 'CONFIG_OVERLAY_REJECTED',
      15_000,
      'the overlay rejected at load',
    );
    assert.match(JSON.stringify(rejected), /fleet\.machineId/);
    await trial.waitForLog((l) => l.event === 'fleet.connected', 15_000, 'on the broker under its own id');
    assert.ok(!trial.logs.some((l) => l.event === 'fleet.config.confirmed'), 'the rejected change was never confirmed');
    assert.deepEqual(readFileSync(rig.overlayFile), confirmed);
    assert.equal(existsSync(pendingFile(rig.overlayFile)), false);
  },
);
