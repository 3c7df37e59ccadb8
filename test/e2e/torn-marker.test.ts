/**
 * A power cut while the ledger's identity marker was written (docs/decisions/power-cuts.md), through the real daemon:
 * the daemon is killed (SIGKILL) with a Static QR session open and a vend reported, and the marker
 * is left empty, as ext4 leaves a file written without fsync. The ledger is intact. The daemon must
 * take the ledger's word (rewrite the marker, warn), run recovery (the Settlement queued and
 * delivered exactly once) and open new sessions: no technician, no `acknowledge-loss`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRig, until } from '../../rigs/rig.js';
import { readAgentTransactions } from '../../rigs/chaos/agent-ledger.js';
import { runCli } from '../hostile/support.js';
import { assertLedgerClean, assertSalesBalance, waitTx } from './support/e2e-rig.js';
import { buy, openSession } from './support/static-session.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

test(
  'a torn marker beside a ledger with an open session and a reported vend: ' +
    'the daemon repairs it, recovery settles once, a new session opens',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const rig = await createRig({ vmc: { vendPolicy: 'manual' } });
    try {
      await rig.startAgent(20_000);
      const cut = await openSession(rig);
      await buy(rig, 12, 1.5);
      const ledgerPath = join(rig.dir, 'ledger.sqlite');
      const marker = `${ledgerPath}.identity`;
      await until(
        () => readAgentTransactions(ledgerPath).find((t) => t.txId === cut.txId)?.recordedSoldMinor === 150,
        10_000,
        'the vend success in the ledger',
      );
      const whole = readFileSync(marker, 'utf8');
      await rig.stopAgent('SIGKILL');
      writeFileSync(marker, ''); // what the power cut left of a marker written without fsync

      // The technician's view agrees with the daemon's: not lost, nothing to acknowledge.
      const doctor = JSON.parse(
        (await runCli(['doctor', '--json', '--config', rig.configFile], { timeoutMs: 60_000 })).stdout,
      ) as { results: Array<{ id: string; status: string; summary: string }> };
      const ledgerCheck = doctor.results.find((r) => r.id === 'ledger');
      assert.equal(ledgerCheck?.status, 'WARN', JSON.stringify(ledgerCheck));
      assert.match(ledgerCheck.summary, /identity marker .* is torn/);
      const ack = await runCli(['ledger', 'acknowledge-loss', '--config', rig.configFile]);
      assert.notEqual(ack.code, 0, 'a torn marker beside a sound ledger is not a loss to acknowledge');
      assert.match(ack.stderr, /not in the lost state/);

      const agent = await rig.startAgent(30_000);
      const repaired = agent.logs.filter((l) => l.event === 'ledger.marker.repaired');
      assert.equal(repaired.length, 1, 'the repair is logged once');
      assert.equal(repaired[0]!.level, 'warn');
      assert.equal(
        agent.logs.some((l) => l.code === 'LEDGER_CORRUPT'),
        false,
        'no ledger-lost alarm',
      );
      assert.equal(readFileSync(marker, 'utf8'), whole, 'the marker witnesses the same ledger again');

      const settled = await waitTx(
        rig,
        cut.txId,
        (t) => t.state === 'settled',
        'the Settlement recovery queued',
        30_000,
      );
      assert.equal(settled.accepted.Settlement, 1);
      assert.equal(settled.accepted.Cancel + settled.accepted.Void, 0);
      assert.equal(settled.settlement?.amount, 1.5);

      const next = await openSession(rig);
      assert.notEqual(next.txId, cut.txId);
      await buy(rig, 13, 2);
      assert.ok(rig.vmc.endSession());
      await waitTx(rig, next.txId, (t) => t.state === 'settled', 'the new sale settled', 30_000);
      assert.equal(
        rig.gateway.ledger().transactions[cut.txId]?.accepted.Settlement,
        1,
        'the recovered sale is still closed exactly once',
      );
      assertLedgerClean(rig);
      assertSalesBalance(rig);
    } finally {
      await rig.close();
    }
  },
);
