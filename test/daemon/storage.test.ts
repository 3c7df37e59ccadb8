/**
 * The real daemon when its ledger cannot be opened at start: payments are refused (never lost),
 * and once the disk takes writes again the machine serves Starts without a restart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createRig, until } from '../../rigs/rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

test(
  'a ledger that cannot be opened at start: payments refused meanwhile, served again once it opens, without a restart',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const rig = await createRig({ vmc: { vendPolicy: 'manual' } });
    const ledgerPath = join(rig.dir, 'ledger.sqlite');
    // A directory where the ledger file should be: SQLite cannot open it (SQLITE_CANTOPEN).
    mkdirSync(ledgerPath);
    try {
      const enabled = rig.nextCommand((c) => c.kind === 'enable' && c.enabled, 15_000, 'C,1');
      await rig.startAgentProcessOnly();
      await enabled;
      const agent = rig.agent!;
      await agent.waitForLog((l) => /ledger cannot be written/.test(l.msg), 10_000, 'the ledger open to fail');
      // Nothing can be recorded: a Dynamic QR selection is denied at once rather than paid unrecorded.
      const denied = rig.nextCommand(
        (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny',
        5000,
        'the vend answer',
      );
      rig.vmc.select(2, 1);
      assert.deepEqual(await denied, { kind: 'vend-deny' });
      rmSync(ledgerPath, { recursive: true });
      await agent.waitForLog((l) => l.msg === 'payment worker ready', 15_000, 'the payment worker to be ready');
      const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
      const start = await rig.start();
      assert.equal(start.outcome.kind, 'approved', 'the machine serves again without a restart');
      await opened;
      const approved = rig.nextCommand((c) => c.kind === 'vend-approve', 5000, 'vend approval');
      rig.vmc.select(1, 1);
      await approved;
      rig.vmc.vendSuccess();
      rig.vmc.endSession();
      await until(
        () => rig.gateway.ledger().transactions[start.transactionId]?.state === 'settled',
        10_000,
        'the Settlement',
      );
    } finally {
      await rig.close();
    }
  },
);
