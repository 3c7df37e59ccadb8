/**
 * A dispensed vend survives a SIGKILL that lands after the machine loop took the result in and
 * before the payment worker committed it (docs/operations.md, "The vend journal"), through the real
 * daemon. To land the kill there every time, the ledger's WAL stalls: the fail-io shim
 * (test/native/fail-io.c, `stall=MS`) holds every write to `ledger.sqlite-wal` and counts the
 * stall, as a worn SD card holds a write for seconds. The journal beside it is out of the shim's
 * scope. The test kills the daemon once the worker is stuck in the vend's commit, restarts it with
 * the disk healthy, and checks the vend is charged, exactly once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRig, until, type Rig } from '../../rigs/rig.js';
import { readAgentOutbox, readAgentTransactions } from '../../rigs/chaos/agent-ledger.js';
import { assertLedgerClean, assertSalesBalance, waitTx } from './support/e2e-rig.js';
import { buy, openSession } from './support/static-session.js';
import { selectAndPay } from './support/dynamic-payment.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const SHIM = fileURLToPath(new URL('../native/libqrvend-failio.so', import.meta.url));

interface StallRig {
  rig: Rig;
  ledger: string;
  journal: string;
  /** The WAL's writes wait this long from now on (0: no more). */
  stall(ms: number): void;
  /** How many stalled (or failed) calls so far. */
  stalls(): number;
  close(): Promise<void>;
}

async function stallRig(config: Record<string, unknown> = {}): Promise<StallRig> {
  assert.ok(existsSync(SHIM), `${SHIM} is built by native/build.mjs (npm ci, npm test)`);
  const store = mkdtempSync(join(tmpdir(), 'qrvend-journal-'));
  const ctl = join(store, 'fail-io.ctl');
  const count = join(store, 'fail-io.count');
  const ledger = join(store, 'ledger.sqlite');
  // Only the WAL is in the shim's scope: the journal beside it is written as usual.
  const env = { LD_PRELOAD: SHIM, QRVEND_FAILIO_DIR: `${ledger}-wal`, QRVEND_FAILIO_CTL: ctl };
  Object.assign(env, { QRVEND_FAILIO_COUNT: count });
  let rig: Rig;
  try {
    rig = await createRig({ vmc: { vendPolicy: 'manual' }, env, config: { ...config, store: { path: ledger } } });
  } catch (err) {
    rmSync(store, { recursive: true, force: true });
    throw err;
  }
  return {
    rig,
    ledger,
    journal: `${ledger}.vend-journal`,
    stall: (ms) => writeFileSync(ctl, ms > 0 ? `stall=${ms}\n` : ''),
    stalls: () => (existsSync(count) ? statSync(count).size : 0),
    async close() {
      try {
        await rig.close();
      } finally {
        rmSync(store, { recursive: true, force: true });
      }
    },
  };
}

/** Kills the daemon once its payment worker is stuck in a ledger write; then lifts the stall. */
async function killDuringCommit(s: StallRig): Promise<void> {
  await until(() => s.stalls() > 0, 10_000, 'the payment worker to stall in its ledger write');
  await s.rig.stopAgent('SIGKILL');
  s.stall(0);
}

const T = { timeout: TEST_DEADLINE_MS };

test('static QR: SIGKILL while a vend success is committed; after the restart it is settled, once', T, async () => {
  const s = await stallRig();
  const { rig } = s;
  try {
    await rig.startAgent(20_000);
    const session = await openSession(rig);
    s.stall(60_000);
    await buy(rig, 12, 1.5); // approved at once (the approval waits for no disk), then dispensed
    await killDuringCommit(s);

    const agent = await rig.startAgent(30_000);
    const closed = (t: { state: string }) => t.state === 'settled' || t.state === 'cancelled';
    const settled = await waitTx(rig, session.txId, closed, 'recovery to close the session', 30_000);
    assert.equal(settled.state, 'settled', `the dispensed vend was charged (${JSON.stringify(settled.accepted)})`);
    assert.equal(settled.settlement?.amount, 1.5);
    assert.equal(settled.accepted.Settlement, 1);
    assert.equal(settled.accepted.Cancel + settled.accepted.Void, 0);
    const replayed = agent.logs.filter((l) => l.msg === 'vend journal: a vend dispensed before a crash, recorded now');
    assert.equal(replayed.length, 1);

    // A later sale goes through as usual, and the journal is cut back once the ledger has it.
    const next = await openSession(rig);
    await buy(rig, 13, 2);
    assert.ok(rig.vmc.endSession());
    await waitTx(rig, next.txId, (t) => t.state === 'settled', 'the next sale settled', 30_000);
    await until(() => statSync(s.journal).size === 0, 10_000, 'the journal to be cut back');
    assert.equal(rig.gateway.ledger().transactions[session.txId]?.accepted.Settlement, 1, 'still settled exactly once');
    assertLedgerClean(rig);
    assertSalesBalance(rig);
  } finally {
    await s.close();
  }
});

test('dynamic QR: SIGKILL while a vend success is committed; after the restart it stands, no Void', T, async () => {
  const s = await stallRig({ mdb: { alwaysIdle: true } });
  const { rig } = s;
  try {
    await rig.startAgent(20_000);
    const pay = await selectAndPay(rig, 7, 1); // 1.00: the gateway simulator pays at once
    assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1 });
    await waitTx(rig, pay.txId, (t) => t.state === 'paid', 'the payment');
    s.stall(60_000);
    assert.ok(rig.vmc.vendSuccess());
    await killDuringCommit(s);

    await rig.startAgent(30_000);
    // Whatever recovery queued is delivered before the verdict is read.
    await until(() => readAgentOutbox(s.ledger).pending === 0, 20_000, 'the outbox to drain');
    const kept = readAgentTransactions(s.ledger).find((t) => t.txId === pay.txId);
    assert.equal(kept?.state, 'vended', 'the ledger holds the vend as dispensed');
    const paid = rig.gateway.ledger().transactions[pay.txId];
    assert.equal(paid?.state, 'paid', `the dispensed vend stays paid (${JSON.stringify(paid?.accepted)})`);
    assert.equal(paid?.accepted.Void, 0, 'no Void for a vend that was dispensed');
    await until(() => statSync(s.journal).size === 0, 10_000, 'the journal taken over and cut back');
    assertLedgerClean(rig);
    assertSalesBalance(rig);
  } finally {
    await s.close();
  }
});
