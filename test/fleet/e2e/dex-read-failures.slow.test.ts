/**
 * The machine audit end to end (docs/decisions/dex-audit.md), where the DEX protocols' timers run
 * out: the real daemon with its DEX line on a pty pair in `auto`, a DDCMP VMC simulator found
 * after the DEX/UCS rounds, then a VMC that never answers: three failed dex.read commands in a
 * row raise DEX_READ_FAILED on the fleet link. In the slow tier (`npm run test:slow`,
 * docs/testing.md): about 20 s of protocol timers. The rest of the audit end to end is
 * dex-audit.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createRig, until } from '../../../rigs/rig.js';
import { startTestBroker } from '../../../rigs/broker/index.js';
import { startDexSim } from '../../../src/sim/dex/vmc.js';
import { createPtyPair } from '../../support/pty.js';
import { PREFIX, protocolFor, startWatcher } from './support/fleet-watcher.js';
import { testKey, writeTrustFile } from '../support/operator-keys.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const fixture = (name: string) => readFileSync(new URL(`../../../../test/fixtures/dex/${name}`, import.meta.url));
const ops = testKey('ops', ['read', 'operate']);

test(
  'auto finds a DDCMP VMC through the daemon; a VMC that never ' +
    'answers fails dex.read and raises DEX_READ_FAILED after 3 reads',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const broker = await startTestBroker();
    const scratch = mkdtempSync(join(tmpdir(), 'qrvend-dex-e2e-'));
    const dexPty = await createPtyPair();
    let sim = await startDexSim({
      path: dexPty.vmcPath,
      protocol: 'ddcmp',
      files: [fixture('vmc-a1.dex')],
      behaviour: 'normal',
    });
    const rig = await createRig({
      config: {
        fleet: {
          url: broker.url,
          topicPrefix: PREFIX,
          machineId: 'M-DEX-3',
          protocolVersion: protocolFor(broker),
          healthIntervalS: 5,
          trustFile: writeTrustFile(scratch, [ops]),
        },
        dex: { port: dexPty.agentPath, protocol: 'auto', intervalS: 0 },
      },
    });
    const watcher = await startWatcher(broker.url, protocolFor(broker), 'M-DEX-3', ops);
    try {
      await rig.startAgent();
      await until(() => watcher.lastStatus()?.online === true, 10_000, 'the retained status online');
      const read = await watcher.command('dex.read', {}, 90_000);
      assert.equal(read.ok, true, JSON.stringify(read));
      const result = (read as { result: Record<string, any> }).result;
      assert.equal(result.protocol, 'ddcmp');
      assert.deepEqual(result.check, { ok: true, reason: null });

      await sim.close();
      sim = await startDexSim({
        path: dexPty.vmcPath,
        protocol: 'ddcmp',
        files: [fixture('vmc-a1.dex')],
        behaviour: 'silent',
      });
      for (let i = 0; i < 3; i++) {
        const failed = await watcher.command('dex.read', {}, 90_000);
        assert.equal(failed.ok, false, JSON.stringify(failed));
        assert.match(JSON.stringify(failed), /DEX_NO_ANSWER/);
      }
      const alarm = await watcher.waitForEvent(
        (e) => e.kind === 'alarm' && e.code === 'DEX_READ_FAILED' && e.state === 'raised',
        20_000,
        'the DEX_READ_FAILED alarm',
      );
      assert.match(JSON.stringify(alarm), /3 audit reads in a row failed; the last: DEX_NO_ANSWER/);
    } finally {
      await watcher.close();
      await rig.close();
      await sim.close();
      await dexPty.close();
      await broker.close();
      rmSync(scratch, { recursive: true, force: true });
    }
  },
);
