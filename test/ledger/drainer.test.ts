import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { createLogger } from '../../src/core/log.js';
import type { GatewayOutcome } from '../../src/gateway/outcome.js';
import { OutboxDrainer, type Ledger, type OutboxOperation, type OutboxSender } from '../../src/ledger/index.js';
import {
  cancelBody,
  ManualClock,
  ManualTimers,
  openStaticSession,
  openTest,
  settlementBody,
  tempLedgerPath,
  voidBody,
} from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const store = { concurrency: 2, backoffBaseMs: 1000, backoffCapMs: 60_000, retryWindowHours: 1, retentionDays: 30 };

const approved: GatewayOutcome<unknown> = {
  kind: 'approved',
  response: { Status: { Verdict: 'Approved' } },
  elapsedMs: 1,
};
const transport: GatewayOutcome<unknown> = {
  kind: 'transport',
  failure: 'reset',
  detail: 'socket hang up',
  httpStatus: null,
  elapsedMs: 1,
};
const declined = (code: number): GatewayOutcome<unknown> => ({
  kind: 'declined',
  code,
  message: `code ${code}`,
  response: {},
  elapsedMs: 1,
});

interface Sent {
  op: OutboxOperation;
  body: string;
  txId: string;
}

/** A gateway stand-in: answers by script, can hold requests open, records everything sent. */
class ScriptedSender implements OutboxSender {
  readonly sent: Sent[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private readonly inFlightTx = new Set<string>();
  overlapSameTx = false;
  held: Array<() => void> = [];
  hold = false;

  constructor(private readonly answer: (s: Sent, attemptOfTx: number) => GatewayOutcome<unknown> = () => approved) {}

  async sendRaw(op: OutboxOperation, body: string): Promise<GatewayOutcome<unknown>> {
    const txId = (JSON.parse(body) as { BasicInfo: { TransactionId: string } }).BasicInfo.TransactionId;
    const s = { op, body, txId };
    this.sent.push(s);
    if (this.inFlightTx.has(txId)) this.overlapSameTx = true;
    this.inFlightTx.add(txId);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    else await new Promise((resolve) => setImmediate(resolve));
    this.inFlight--;
    this.inFlightTx.delete(txId);
    return this.answer(s, this.sent.filter((x) => x.txId === txId).length);
  }

  release(): void {
    const held = this.held;
    this.held = [];
    for (const r of held) r();
  }
}

function settledSession(ledger: Ledger, txId: string, price = 1): number {
  openStaticSession(ledger, txId);
  ledger.recordVendApproved(txId, { seq: 1, item: 1, price });
  ledger.recordVendResult(txId, 1, 'success');
  return ledger.settleSession(txId, settlementBody(txId, price, 1)).outboxId!;
}

function captureLogs(): { logger: ReturnType<typeof createLogger>; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  const logger = createLogger({ level: 'info', destination });
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

test(
  'the drainer delivers every row and closes its transaction as settled, cancelled or voided',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempLedgerPath();
    const clock = new ManualClock();
    const ledger = openTest(tmp.path, clock);
    try {
      settledSession(ledger, 'TX-A');
      openStaticSession(ledger, 'TX-B');
      ledger.cancelSession('TX-B', 2, cancelBody('TX-B', {}, 2));
      ledger.requestQr({ txId: 'TX-C', amount: 1, item: 1, requestId: null });
      ledger.recordQrIssued('TX-C', {});
      ledger.voidPayment('TX-C', 3, voidBody('TX-C', { IsGatewayTimeout: true }, 3));
      const sender = new ScriptedSender();
      const drainer = new OutboxDrainer({ ledger, sender, store, now: clock.now, timers: new ManualTimers() });
      drainer.start();
      await drainer.whenIdle();
      assert.deepEqual(sender.sent.map((s) => `${s.op} ${s.txId}`).sort(), [
        'Cancel TX-B',
        'Settlement TX-A',
        'Void TX-C',
      ]);
      assert.equal(ledger.getTransaction('TX-A')?.state, 'settled');
      assert.equal(ledger.getTransaction('TX-B')?.state, 'cancelled');
      assert.equal(ledger.getTransaction('TX-C')?.state, 'voided');
      assert.deepEqual(drainer.counts(), { pending: 0, dead: 0, oldestPendingAtMs: null });
      await drainer.stop();
    } finally {
      ledger.close();
      tmp.cleanup();
    }
  },
);

test(
  'one request in flight per TransactionId, rows of one transaction in order, global concurrency respected',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempLedgerPath();
    const clock = new ManualClock();
    const ledger = openTest(tmp.path, clock);
    try {
      for (const tx of ['TX-1', 'TX-2', 'TX-3', 'TX-4', 'TX-5']) settledSession(ledger, tx);
      // A second request for TX-1 recorded after the first (the schema allows several per transaction).
      const raw = new Database(tmp.path);
      const second = cancelBody('TX-1', { second: true }, 0);
      raw
        .prepare(
          `INSERT INTO outbox (tx_id, op, body, status, enqueued_at_ms, window_started_at_ms, ` +
            `next_attempt_at_ms) VALUES ('TX-1', 'Cancel', ?, 'pending', ?, ?, ?)`,
        )
        .run(second, clock.ms, clock.ms, clock.ms - 1);
      raw.close();
      const sender = new ScriptedSender();
      sender.hold = true;
      const drainer = new OutboxDrainer({ ledger, sender, store, now: clock.now, timers: new ManualTimers() });
      drainer.start();
      for (let round = 0; round < 10 && sender.sent.length < 6; round++) {
        assert.ok(sender.inFlight <= store.concurrency);
        await new Promise((r) => setImmediate(r));
        sender.release();
        await new Promise((r) => setImmediate(r));
      }
      sender.hold = false;
      sender.release();
      await drainer.whenIdle();
      assert.equal(sender.sent.length, 6);
      assert.ok(sender.maxInFlight <= store.concurrency, `max in flight ${sender.maxInFlight}`);
      assert.equal(sender.overlapSameTx, false);
      // The later Cancel of TX-1 was due earlier, yet it went only after TX-1's Settlement.
      const tx1 = sender.sent.filter((s) => s.txId === 'TX-1').map((s) => s.op);
      assert.deepEqual(tx1, ['Settlement', 'Cancel']);
      await drainer.stop();
    } finally {
      ledger.close();
      tmp.cleanup();
    }
  },
);

test(
  'retryable failures back off exponentially with jitter and resend the first body byte for byte',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempLedgerPath();
    const clock = new ManualClock();
    const ledger = openTest(tmp.path, clock);
    try {
      const id = settledSession(ledger, 'TX-RETRY', 2.5);
      const recorded = ledger.outbox.get(id)!.body;
      const script = [transport, declined(6), declined(30), declined(992), declined(999), approved];
      const sender = new ScriptedSender((_s, n) => script[n - 1]!);
      const drainer = new OutboxDrainer({
        ledger,
        sender,
        store,
        now: clock.now,
        random: () => 0.5,
        timers: new ManualTimers(),
      });
      drainer.start();
      await drainer.whenIdle();
      // random 0.5 -> half the ceiling: 500, 1000, 2000, 4000, 8000 ms.
      for (const wait of [500, 1000, 2000, 4000, 8000]) {
        const before = sender.sent.length;
        assert.equal(ledger.outbox.get(id)!.nextAttemptAtMs, clock.ms + wait);
        clock.advance(wait - 1);
        drainer.kick();
        await drainer.whenIdle();
        assert.equal(sender.sent.length, before, `not sent before its time (${wait} ms)`);
        clock.advance(1);
        drainer.kick();
        await drainer.whenIdle();
        assert.equal(sender.sent.length, before + 1);
      }
      assert.equal(sender.sent.length, 6);
      assert.ok(
        sender.sent.every((s) => s.body === recorded),
        'every attempt carried the recorded body',
      );
      assert.equal(ledger.outbox.get(id)!.status, 'done');
      assert.equal(ledger.outbox.get(id)!.attempts, 6);
      assert.equal(ledger.getTransaction('TX-RETRY')?.state, 'settled');
      await drainer.stop();
    } finally {
      ledger.close();
      tmp.cleanup();
    }
  },
);

test(
  'a final decline dead-letters the row with an alarm; a manual retry sends it again with a fresh window',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempLedgerPath();
    const clock = new ManualClock();
    const { logger, lines } = captureLogs();
    const ledger = openTest(tmp.path, clock, { logger });
    try {
      const id = settledSession(ledger, 'TX-DEAD');
      let answer: GatewayOutcome<unknown> = declined(2);
      const sender = new ScriptedSender(() => answer);
      const alarms: string[] = [];
      const drainer = new OutboxDrainer({
        ledger,
        sender,
        store,
        logger,
        now: clock.now,
        timers: new ManualTimers(),
        onDeadLetter: (row, error) => alarms.push(`${row.id} ${error}`),
      });
      drainer.start();
      await drainer.whenIdle();
      assert.equal(ledger.outbox.get(id)?.status, 'dead');
      assert.equal(ledger.outbox.get(id)?.lastCode, 2);
      assert.equal(ledger.getTransaction('TX-DEAD')?.state, 'dead');
      assert.deepEqual(alarms, [`${id} declined 2: code 2`]);
      const alarmLine = lines().find((l) => l.code === 'OUTBOX_DEAD_LETTER');
      assert.equal(alarmLine?.level, 'error');
      assert.deepEqual(drainer.counts(), { pending: 0, dead: 1, oldestPendingAtMs: null });
      // A dead row is never sent again by itself.
      clock.advance(DAY);
      drainer.kick();
      await drainer.whenIdle();
      assert.equal(sender.sent.length, 1);

      answer = approved;
      const retried = ledger.outbox.retryDead(id);
      assert.equal(retried.status, 'pending');
      assert.equal(retried.windowStartedAtMs, clock.ms);
      assert.equal(ledger.getTransaction('TX-DEAD')?.state, 'settling');
      drainer.kick();
      await drainer.whenIdle();
      assert.equal(sender.sent.length, 2);
      assert.equal(sender.sent[1]?.body, sender.sent[0]?.body);
      assert.equal(ledger.getTransaction('TX-DEAD')?.state, 'settled');
      assert.throws(() => ledger.outbox.retryDead(id), /is done, not dead/);
      assert.throws(() => ledger.outbox.retryDead(9999), /does not exist/);
      await drainer.stop();
    } finally {
      ledger.close();
      tmp.cleanup();
    }
  },
);

test(
  'the retry window runs from enqueue time across restarts, then the row is dead',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempLedgerPath();
    const clock = new ManualClock();
    try {
      let ledger = openTest(tmp.path, clock);
      const id = settledSession(ledger, 'TX-WINDOW');
      const enqueuedAt = clock.ms;
      const sender = new ScriptedSender(() => transport);
      let drainer = new OutboxDrainer({
        ledger,
        sender,
        store,
        now: clock.now,
        random: () => 0.999,
        timers: new ManualTimers(),
      });
      drainer.start();
      await drainer.whenIdle();
      await drainer.stop();
      ledger.close(); // restart

      clock.advance(40 * 60_000);
      ledger = openTest(tmp.path, clock);
      assert.equal(ledger.outbox.get(id)?.attempts, 1, 'attempts survive the restart');
      assert.equal(ledger.outbox.get(id)?.windowStartedAtMs, enqueuedAt);
      drainer = new OutboxDrainer({
        ledger,
        sender,
        store,
        now: clock.now,
        random: () => 0.999,
        timers: new ManualTimers(),
      });
      drainer.start();
      // Keep failing; step the clock to each next attempt until the row leaves pending.
      for (let i = 0; i < 200 && ledger.outbox.get(id)?.status === 'pending'; i++) {
        clock.ms = Math.max(clock.ms, ledger.outbox.get(id)!.nextAttemptAtMs);
        drainer.kick();
        await drainer.whenIdle();
      }
      const row = ledger.outbox.get(id)!;
      assert.equal(row.status, 'dead');
      assert.match(row.lastError ?? '', /retry window exhausted/);
      assert.equal(row.deadAtMs, enqueuedAt + HOUR, 'the last attempt was at the window end, not later');
      await drainer.stop();
      ledger.close();
    } finally {
      tmp.cleanup();
    }
  },
);

test(
  'retention: delivered rows and closed histories go after retentionDays; dead and pending rows stay',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempLedgerPath();
    const clock = new ManualClock();
    const ledger = openTest(tmp.path, clock);
    try {
      const old = settledSession(ledger, 'TX-OLD');
      const dead = settledSession(ledger, 'TX-OLD-DEAD');
      const sender = new ScriptedSender((s) => (s.txId === 'TX-OLD-DEAD' ? declined(8) : approved));
      const drainer = new OutboxDrainer({ ledger, sender, store, now: clock.now, timers: new ManualTimers() });
      drainer.start();
      await drainer.whenIdle();
      clock.advance(29 * DAY);
      const young = settledSession(ledger, 'TX-YOUNG'); // the enqueue itself wakes the drainer, no kick()
      assert.equal(drainer.inFlightCount, 1);
      await drainer.whenIdle();
      await drainer.stop();
      const pending = settledSession(ledger, 'TX-PENDING-OLD'); // stays pending: the drainer is stopped

      clock.advance(DAY + 1);
      const pruned = drainer.prune();
      assert.deepEqual(pruned, { outboxRows: 1, transactions: 1 });
      assert.equal(ledger.outbox.get(old), null);
      assert.equal(ledger.getTransaction('TX-OLD'), null);
      assert.deepEqual(ledger.eventsOf('TX-OLD'), []);
      assert.deepEqual(ledger.vendsOf('TX-OLD'), []);
      assert.equal(ledger.outbox.get(dead)?.status, 'dead');
      assert.equal(ledger.outbox.get(young)?.status, 'done');
      assert.equal(ledger.outbox.get(pending)?.status, 'pending');
      assert.equal(ledger.getTransaction('TX-OLD-DEAD')?.state, 'dead');
    } finally {
      ledger.close();
      tmp.cleanup();
    }
  },
);

test('stop() waits for the request in flight and records its result', { timeout: TEST_DEADLINE_MS }, async () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  const ledger = openTest(tmp.path, clock);
  try {
    const id = settledSession(ledger, 'TX-STOP');
    const sender = new ScriptedSender();
    sender.hold = true;
    const drainer = new OutboxDrainer({ ledger, sender, store, now: clock.now, timers: new ManualTimers() });
    drainer.start();
    assert.equal(drainer.inFlightCount, 1);
    let stopped = false;
    const stopping = drainer.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(stopped, false, 'stop waits while a request is in flight');
    sender.release();
    await stopping;
    assert.equal(ledger.outbox.get(id)?.status, 'done');
    // After stop nothing more is taken.
    settledSession(ledger, 'TX-AFTER-STOP');
    drainer.kick();
    assert.equal(sender.sent.length, 1);
  } finally {
    ledger.close();
    tmp.cleanup();
  }
});

test('with real timers the drainer wakes by itself when a retry falls due', { timeout: TEST_DEADLINE_MS }, async () => {
  const tmp = tempLedgerPath();
  const ledger = openTest(tmp.path, new ManualClock(Date.now()));
  const realLedger = ledger;
  try {
    settledSession(realLedger, 'TX-TIMER');
    let calls = 0;
    const sender = new ScriptedSender(() => (++calls === 1 ? transport : approved));
    const delivered = new Promise<void>((resolve) => {
      const drainer = new OutboxDrainer({
        ledger: realLedger,
        sender,
        store: { ...store, backoffBaseMs: 20 },
        onDelivered: () => {
          void drainer.stop().then(resolve);
        },
      });
      drainer.start();
    });
    // The drainer's timers are unref'd (they must not keep a stopping worker alive); hold the loop here.
    const keepAlive = setInterval(() => undefined, 1000);
    await delivered.finally(() => clearInterval(keepAlive));
    assert.equal(calls, 2);
  } finally {
    ledger.close();
    tmp.cleanup();
  }
});
