/**
 * The chaos audit on hand-made records: it must call a missing charge "lost" unless the daemon
 * died with the vend uncommitted and the success line was inside the crash window, and it must
 * catch double closings, unresolved approvals and charges without a vend.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audit, UNRECORDED_WINDOW_MS } from '../../rigs/chaos/audit.js';
import type { Attempt } from '../../rigs/chaos/harness.js';
import type { AgentTransaction } from '../../rigs/chaos/agent-ledger.js';
import type { LedgerView, TxRecord } from '../../src/sim/gateway/index.js';
import type { SimSessionRecord } from '../../src/sim/vmc/index.js';

const T0 = 1_000_000;
const zero = { Settlement: 0, Cancel: 0, Void: 0 };

function staticTx(id: string, settled: number | null, closings = 1): TxRecord {
  return {
    transactionId: id,
    flow: 'static',
    state: settled === null ? 'cancelled' : 'settled',
    authorization: {
      verdict: 'Approved',
      code: null,
      message: null,
      amount: 10,
      paymentInfo: null,
      paymentInfoText: null,
    },
    qr: null,
    settlement:
      settled === null
        ? null
        : {
            verdict: 'Approved',
            code: null,
            message: null,
            amount: settled,
            reasonCode: null,
            gatewayTimeout: false,
            products: 1,
          },
    cancel: null,
    void: null,
    requests: { Authorization: 1, Settlement: 1, Cancel: 0, GenerateQR: 0, Inquiry: 0, Void: 0 },
    accepted: settled === null ? { ...zero, Cancel: closings } : { ...zero, Settlement: closings },
    duplicates: { ...zero },
    conflicts: [],
  };
}

function view(txs: TxRecord[]): LedgerView {
  return {
    summary: {
      transactions: txs.length,
      byState: {},
      requests: { Authorization: 0, Settlement: 0, Cancel: 0, GenerateQR: 0, Inquiry: 0, Void: 0 },
      duplicates: 0,
      conflicts: 0,
      rejected: 0,
      openAuthorizations: [],
      closedMoreThanOnce: [],
      faults: {},
    },
    transactions: Object.fromEntries(txs.map((t) => [t.transactionId, t])),
    rejected: [],
  };
}

const session = (amounts: number[]): SimSessionRecord => ({
  id: 1,
  kind: 'funded',
  funds: 10,
  end: 'complete',
  vends: amounts.map((a) => ({ item: 1, price: a, approved: a, outcome: 'success' as const })),
});
const agentTx = (id: string, recordedSoldMinor: number): AgentTransaction => ({
  txId: id,
  flow: 'static',
  state: 'settled',
  createdAtMs: T0 + 1,
  recordedSoldMinor,
});

function attempt(kill: Attempt['kill'], successesAt: number[], amountMinor = 200): Attempt {
  const successes = successesAt.map((atMs) => ({ atMs, amountMinor, afterKill: false }));
  const where = { startedAtMs: T0, vmcRecordsBefore: 0, staticTxId: 'tx1' };
  return { n: 1, kind: 'static', plan: { kind: 'none' }, ...where, successes, failures: [], kill, steps: [] };
}

const outbox = { pending: 0, dead: 0, open: [] };

test('a sale settled for what the VMC dispensed passes', () => {
  const r = audit({
    attempts: [attempt(null, [T0 + 10, T0 + 20])],
    vmc: [session([2, 2])],
    gateway: view([staticTx('tx1', 4)]),
    agentTxs: [agentTx('tx1', 400)],
    outbox,
  });
  assert.ok(r.ok, JSON.stringify(r.findings));
  assert.equal(r.lostMinor, 0);
});

test('a vend settled short without any kill is lost', () => {
  const r = audit({
    attempts: [attempt(null, [T0 + 10, T0 + 20])],
    vmc: [session([2, 2])],
    gateway: view([staticTx('tx1', 2)]),
    agentTxs: [agentTx('tx1', 200)],
    outbox,
  });
  assert.equal(r.ok, false);
  assert.equal(r.lostMinor, 200);
});

test('a vend dispensed just before a kill and not committed is unrecorded at crash, not lost', () => {
  const kill = { atMs: T0 + 30, what: 'after-vend-success', committed: [agentTx('tx1', 200)] };
  const r = audit({
    attempts: [attempt(kill, [T0 + 10, T0 + 25])],
    vmc: [session([2, 2])],
    gateway: view([staticTx('tx1', 2)]),
    agentTxs: [agentTx('tx1', 200)],
    outbox,
  });
  assert.ok(r.ok, JSON.stringify(r.findings));
  assert.deepEqual(r.unrecordedAtCrash, { vends: 1, minor: 200, afterKill: 0 });
  assert.equal(r.lostMinor, 0);
});

test('a vend committed before the kill but not charged is lost', () => {
  const kill = { atMs: T0 + 30, what: 'after-vend-success', committed: [agentTx('tx1', 400)] };
  const r = audit({
    attempts: [attempt(kill, [T0 + 10, T0 + 25])],
    vmc: [session([2, 2])],
    gateway: view([staticTx('tx1', 2)]),
    agentTxs: [agentTx('tx1', 400)],
    outbox,
  });
  assert.equal(r.ok, false);
  assert.equal(r.lostMinor, 200);
});

test('a vend the vend journal kept at the kill (not in the ledger) must be charged: short is lost', () => {
  const kept = { ...agentTx('tx1', 400), journalOnly: { minor: 200, vends: 1 } };
  const kill = { atMs: T0 + 30, what: 'after-vend-success', committed: [kept] };
  const base = { attempts: [attempt(kill, [T0 + 10, T0 + 25])], vmc: [session([2, 2])], outbox };
  const short = audit({ ...base, gateway: view([staticTx('tx1', 2)]), agentTxs: [agentTx('tx1', 200)] });
  assert.equal(short.ok, false);
  assert.equal(short.lostMinor, 200);
  assert.deepEqual(short.unrecordedAtCrash, { vends: 0, minor: 0, afterKill: 0 });
  const charged = audit({ ...base, gateway: view([staticTx('tx1', 4)]), agentTxs: [agentTx('tx1', 400)] });
  assert.ok(charged.ok, JSON.stringify(charged.findings));
  assert.deepEqual(charged.keptByJournal, { vends: 1, minor: 200 });
});

test('an uncommitted vend dispensed long before the kill is not excused', () => {
  const kill = { atMs: T0 + 10 + UNRECORDED_WINDOW_MS + 500, what: 'delay', committed: [agentTx('tx1', 200)] };
  const r = audit({
    attempts: [attempt(kill, [T0 + 5, T0 + 10])],
    vmc: [session([2, 2])],
    gateway: view([staticTx('tx1', 2)]),
    agentTxs: [agentTx('tx1', 200)],
    outbox,
  });
  assert.equal(r.ok, false);
  assert.equal(r.unrecordedAtCrash.minor, 0);
});

test('two accepted closings, an open approval and a charge above the vends are each caught', () => {
  const open = { ...staticTx('tx2', null), state: 'authorized' as const, accepted: { ...zero } };
  const r = audit({
    attempts: [attempt(null, [T0 + 10])],
    vmc: [session([2])],
    gateway: view([staticTx('tx1', 3, 2), open]),
    agentTxs: [agentTx('tx1', 200), agentTx('tx2', 0)],
    outbox,
  });
  assert.deepEqual(r.chargedTwice, ['tx1']);
  assert.deepEqual(r.unresolved, ['tx2']);
  assert.equal(r.chargedNotVendedMinor, 100);
  assert.equal(r.ok, false);
});

// The mirror of the crash window (docs/decisions/sales-and-recovery.md): an approval the journal
// held with no result is charged at the restart (MDB 4.2 7.4.7), even when the VMC failed the vend.
const failedAfter = (vends: number[], failed: number): SimSessionRecord => {
  const s = session(vends);
  return { ...s, vends: [...s.vends, { item: 2, price: failed, approved: failed, outcome: 'failed' as const }] };
};

test('an approval charged at the restart whose vend the VMC failed in the window: its own line, not a finding', () => {
  const kept = { ...agentTx('tx1', 200), approvedOnly: { minor: 150, vends: 1 } };
  const kill = { atMs: T0 + 30, what: 'between-vend-approve-and-success', committed: [kept] };
  const a = { ...attempt(kill, [T0 + 10]), failures: [{ atMs: T0 + 40, amountMinor: 150, afterKill: true }] };
  const charged = { gateway: view([staticTx('tx1', 3.5)]), agentTxs: [agentTx('tx1', 350)] };
  const r = audit({ attempts: [a], vmc: [failedAfter([2], 1.5)], ...charged, outbox });
  assert.ok(r.ok, JSON.stringify(r.findings));
  assert.deepEqual(r.chargedByResetRule, { vends: 1, minor: 150, afterKill: 1 });
  assert.deepEqual(r.approvedAtKill, { vends: 1, minor: 150 });
  assert.equal(r.chargedNotVendedMinor, 0);
  assert.deepEqual(r.unrecordedAtCrash, { vends: 0, minor: 0, afterKill: 0 });
});

test('an approval charged at the restart whose vend the VMC dispensed: owed, nothing unrecorded', () => {
  const kept = { ...agentTx('tx1', 200), approvedOnly: { minor: 200, vends: 1 } };
  const kill = { atMs: T0 + 30, what: 'between-vend-approve-and-success', committed: [kept] };
  const successes = [
    { atMs: T0 + 10, amountMinor: 200, afterKill: false },
    { atMs: T0 + 40, amountMinor: 200, afterKill: true }, // dispensed after the kill: nobody heard it
  ];
  const a = { ...attempt(kill, []), successes };
  const paid = { gateway: view([staticTx('tx1', 4)]), agentTxs: [agentTx('tx1', 400)] };
  const r = audit({ attempts: [a], vmc: [session([2, 2])], ...paid, outbox });
  assert.ok(r.ok, JSON.stringify(r.findings));
  assert.deepEqual(r.unrecordedAtCrash, { vends: 0, minor: 0, afterKill: 0 });
  assert.deepEqual(r.chargedByResetRule, { vends: 0, minor: 0, afterKill: 0 });
  // The same approval, not charged after the restart, is lost.
  const unpaid = { gateway: view([staticTx('tx1', 2)]), agentTxs: [agentTx('tx1', 200)] };
  const short = audit({ attempts: [a], vmc: [session([2, 2])], ...unpaid, outbox });
  assert.equal(short.lostMinor, 200);
  assert.equal(short.ok, false);
});

test('a failed vend charged outside the window (failure long before the kill) stays a finding', () => {
  const kept = { ...agentTx('tx1', 200), approvedOnly: { minor: 150, vends: 1 } };
  const kill = { atMs: T0 + 40 + UNRECORDED_WINDOW_MS + 500, what: 'delay', committed: [kept] };
  const a = { ...attempt(kill, [T0 + 10]), failures: [{ atMs: T0 + 40, amountMinor: 150, afterKill: false }] };
  const charged = { gateway: view([staticTx('tx1', 3.5)]), agentTxs: [agentTx('tx1', 350)] };
  const r = audit({ attempts: [a], vmc: [failedAfter([2], 1.5)], ...charged, outbox });
  assert.equal(r.ok, false);
  assert.deepEqual(r.chargedByResetRule, { vends: 0, minor: 0, afterKill: 0 });
  assert.equal(r.chargedNotVendedMinor, 150);
});
