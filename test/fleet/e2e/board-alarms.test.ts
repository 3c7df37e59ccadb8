/**
 * The MDB alarms on the fleet link (docs/decisions/real-vending-machines.md items 3 and 5): the real daemon, the VMC
 * simulator on
 * a pty pair and a real MQTT broker. A board that refuses a SETCONF key raises BOARD_CONFIG_REFUSED
 * with the key and the answer; a VMC that resets the reader after every setup raises VMC_RESET_LOOP
 * with what to try.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { createRig, type RigOptions } from '../../../rigs/rig.js';
import { startTestBroker } from '../../../rigs/broker/index.js';
import { PREFIX, protocolFor, startWatcher, type FleetWatcher } from './support/fleet-watcher.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

async function withFleetRig(
  machineId: string,
  vmc: RigOptions['vmc'],
  body: (watcher: FleetWatcher) => Promise<void>,
): Promise<void> {
  const broker = await startTestBroker();
  const secretDir = mkdtempSync(join(tmpdir(), 'qrvend-board-alarms-'));
  const passwordFile = join(secretDir, 'broker-password');
  writeFileSync(passwordFile, `${randomBytes(24).toString('hex')}\n`, { mode: 0o600 });
  const rig = await createRig({
    vmc,
    config: {
      fleet: {
        url: broker.url,
        topicPrefix: PREFIX,
        machineId,
        protocolVersion: protocolFor(broker),
        healthIntervalS: 5,
        username: 'device-e2e',
        passwordFile,
      },
    },
  });
  const watcher = await startWatcher(broker.url, protocolFor(broker), machineId);
  try {
    await rig.startAgentProcessOnly();
    await body(watcher);
  } finally {
    await watcher.close();
    await rig.close();
    await broker.close();
    rmSync(secretDir, { recursive: true, force: true });
  }
}

test('a refused SETCONF key is an alarm on the fleet link, naming the key and the answer', T, async () => {
  await withFleetRig(
    'M-BOARD-1',
    {
      firmwareKeys: {
        knownKeys: [
          'mdb-always-idle',
          'mdb-currency-code',
          'mdb-decimal-places',
          'mdb-scale-factor',
          'mdb-timeout-vend',
        ],
      },
    },
    async (watcher) => {
      const alarm = await watcher.waitForEvent(
        (e) => e.kind === 'alarm' && e.code === 'BOARD_CONFIG_REFUSED' && e.state === 'raised',
        60_000,
        'the BOARD_CONFIG_REFUSED alarm',
      );
      assert.match(JSON.stringify(alarm), /mdb-addr=0x10 \(answer: c,ERR,SETCONF mdb-addr\)/);
    },
  );
});

test('a VMC reset loop is an alarm on the fleet link that says what to try', T, async () => {
  await withFleetRig('M-BOARD-2', { quirks: { resetAfterSetup: -1 } }, async (watcher) => {
    const alarm = await watcher.waitForEvent(
      (e) => e.kind === 'alarm' && e.code === 'VMC_RESET_LOOP' && e.state === 'raised',
      60_000,
      'the VMC_RESET_LOOP alarm',
    );
    assert.match(JSON.stringify(alarm), /Try a session profile/);
  });
});
