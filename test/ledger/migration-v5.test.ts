/**
 * Schema 5 (SD-card wear, docs/decisions/benchmarks.md) on a ledger written by the previous release: a schema-4 file
 * made with that release's DDL (test/ledger/schema-v4.ts) and 4 KiB pages, holding transactions in
 * every kind of state, their vends, an event log with interleaved histories, outbox rows
 * (delivered, pending, dead), fleet events and the AUTOINCREMENT counters. It is migrated by
 * opening it with the product, then read and written by the product. Real SQLite files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { openLedger, recoverLedger, SCHEMA_VERSION, type Ledger } from '../../src/ledger/index.js';
import { ManualClock, recordingBodies, settlementBody, tempLedgerPath } from './helpers.js';
import { SCHEMA_V4_STEPS } from './schema-v4.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const DAY = 86_400_000;
/** The clock of the migrated ledger; the history below is from 200 days before it. */
const NOW = Date.UTC(2026, 10, 23, 7, 0, 0);
const OLD = NOW - 200 * DAY;

type Row = Record<string, unknown>;

/** Writes a schema-4 ledger the way the previous release did: its DDL, its rows, its counters. */
function writeV4Ledger(path: string): void {
  const db = new Database(path);
  try {
    db.pragma('page_size = 4096'); // the first release's page size: an existing file keeps it
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = OFF'); // to hold one orphan row (see below)
    for (const step of SCHEMA_V4_STEPS) db.exec(step);
    db.pragma('user_version = 4');
    db.transaction(() => {
      const tx = db.prepare(
        `INSERT INTO transactions (tx_id, flow, state, decimal_places, amount_minor, auth_amount_minor, item, \
request_id, start_data, payment_info, qr_data, created_at_ms, updated_at_ms, machine_au_time, age_limit)
         VALUES (?, ?, ?, 2, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
      );
      const pi = '{"AuthCode":"A1","AuthAmount":5.00,"SrvTranId":"S-1"}';
      const start = '{"appUserId":"u","balance":null}';
      tx.run(
        'S-done-aaaa',
        'static',
        'settled',
        500,
        500,
        null,
        null,
        start,
        pi,
        null,
        OLD,
        OLD + 60_000,
        '230526070000',
      );
      tx.run(
        'S-open-aaaa',
        'static',
        'session_open',
        500,
        500,
        null,
        null,
        start,
        pi,
        null,
        OLD + 1000,
        OLD + 2000,
        '230526070001',
      );
      tx.run(
        'S-pend-aaaa',
        'static',
        'settling',
        500,
        500,
        null,
        null,
        start,
        pi,
        null,
        OLD + 3000,
        OLD + 4000,
        '230526070003',
      );
      tx.run(
        'S-dead-aaaa',
        'static',
        'dead',
        500,
        500,
        null,
        null,
        start,
        pi,
        null,
        OLD + 5000,
        OLD + 6000,
        '230526070005',
      );
      tx.run(
        'D-paid-aaaa',
        'dynamic',
        'paid',
        250,
        250,
        30,
        'r-1',
        null,
        '{"SrvTranId":"Q","RRN":"R"}',
        '{"SrvTranId":"Q"}',
        OLD + 7000,
        OLD + 8000,
        '230526070007',
      );
      tx.run(
        'D-vend-aaaa',
        'dynamic',
        'vended',
        120,
        120,
        31,
        'r-2',
        null,
        '{"SrvTranId":"Q2"}',
        '{"SrvTranId":"Q2"}',
        OLD + 9000,
        OLD + 9500,
        '230526070009',
      );

      const vend = db.prepare(
        `INSERT INTO vends (tx_id, seq, item, price_minor, state, ` +
          `created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      );
      vend.run('S-done-aaaa', 1, 11, 150, 'success', OLD + 10, OLD + 20);
      vend.run('S-done-aaaa', 2, 12, 250, 'success', OLD + 30, OLD + 40);
      vend.run('S-open-aaaa', 1, 13, 100, 'approved', OLD + 1500, OLD + 1500);
      vend.run('S-pend-aaaa', 1, 14, 200, 'success', OLD + 3500, OLD + 3600);
      vend.run('S-dead-aaaa', 1, 15, 300, 'success', OLD + 5500, OLD + 5600);
      // An orphan (a vend whose transaction is gone) cannot be written with foreign keys on, as the
      // ledger always writes; a file edited by hand could hold one, and the upgrade keeps it too.
      vend.run('S-gone-aaaa', 1, 16, 50, 'failed', OLD, OLD);

      // The histories interleave in the log, as they do when sales overlap their deliveries.
      const ev = db.prepare(
        `INSERT INTO events (tx_id, at_ms, kind, from_state, to_state, detail) VALUES (?, ?, ?, ?, ?, ?)`,
      );
      const order: Array<[string, string, string | null, string | null]> = [
        ['S-done-aaaa', 'created', null, 'start_accepted'],
        ['S-done-aaaa', 'markAuthorizing', 'start_accepted', 'authorizing'],
        ['S-done-aaaa', 'markAuthorized', 'authorizing', 'authorized'],
        ['S-open-aaaa', 'created', null, 'start_accepted'],
        ['S-done-aaaa', 'settleSession', 'session_open', 'settling'],
        ['S-open-aaaa', 'openSession', 'authorized', 'session_open'],
        ['S-pend-aaaa', 'created', null, 'start_accepted'],
        ['S-done-aaaa', 'outbox.delivered', 'settling', 'settled'],
        ['S-pend-aaaa', 'settleSession', 'session_open', 'settling'],
        ['S-dead-aaaa', 'created', null, 'start_accepted'],
        ['S-dead-aaaa', 'outbox.dead', 'settling', 'dead'],
        ['D-paid-aaaa', 'created', null, 'qr_requested'],
        ['S-pend-aaaa', 'outbox.retry-scheduled', null, null],
        ['D-paid-aaaa', 'recordPaid', 'qr_issued', 'paid'],
        ['D-vend-aaaa', 'created', null, 'qr_requested'],
        ['D-vend-aaaa', 'recordVended', 'vend_approved', 'vended'],
      ];
      order.forEach(([txId, kind, from, to], i) => ev.run(txId, OLD + i, kind, from, to, JSON.stringify({ n: i })));

      const ob = db.prepare(
        `INSERT INTO outbox (tx_id, op, body, status, enqueued_at_ms, window_started_at_ms, attempts, \
next_attempt_at_ms, last_error, last_code, done_at_ms, dead_at_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      ob.run(
        'S-done-aaaa',
        'Settlement',
        settlementBody('S-done-aaaa', 4, 2),
        'done',
        OLD + 50,
        OLD + 50,
        1,
        OLD + 50,
        null,
        null,
        OLD + 60_000,
        null,
      );
      ob.run(
        'S-pend-aaaa',
        'Settlement',
        settlementBody('S-pend-aaaa', 2, 1),
        'pending',
        OLD + 4000,
        OLD + 4000,
        3,
        OLD + 4500,
        'HTTP 500',
        500,
        null,
        null,
      );
      ob.run(
        'S-dead-aaaa',
        'Settlement',
        settlementBody('S-dead-aaaa', 3, 1),
        'dead',
        OLD + 5800,
        OLD + 5800,
        9,
        OLD + 5900,
        'declined',
        7,
        null,
        OLD + 6000,
      );

      // Fleet events: seq 1 to 5 were published and deleted, 6 and 7 wait; the counter says 7.
      const fe = db.prepare(
        `INSERT INTO fleet_events (seq, event_id, kind, body, created_at_ms) VALUES (?, ?, ?, ?, ?)`,
      );
      fe.run(5, 'ev-5', 'alarm', '{"kind":"alarm"}', OLD + 9600);
      fe.run(6, 'ev-6', 'sale', '{"kind":"sale","txId":"D-vend-aaaa"}', OLD + 9700);
      fe.run(7, 'ev-7', 'alarm', '{"kind":"alarm","state":"raised"}', OLD + 9800);
      db.prepare('DELETE FROM fleet_events WHERE seq = 5').run();

      db.prepare('INSERT INTO used_tx_ids (tx_id, last_used_at_ms) VALUES (?, ?)').run('S-pruned-aa', NOW - 10 * DAY);
      db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run('fleet.events.dropped', '2');
    })();
  } finally {
    db.close();
  }
}

function dump(path: string): Record<string, Row[]> {
  const db = new Database(path, { readonly: true });
  try {
    const q = (sql: string) => db.prepare(sql).all() as Row[];
    return {
      transactions: q(
        'SELECT tx_id, flow, state, decimal_places, amount_minor, auth_amount_minor, item, ' +
          'request_id, start_data, payment_info, qr_data, decline_code, created_at_ms, ' +
          'updated_at_ms, machine_au_time, age_limit FROM transactions ORDER BY tx_id',
      ),
      vends: q('SELECT * FROM vends ORDER BY tx_id, seq'),
      events: q('SELECT id, tx_id, at_ms, kind, from_state, to_state, detail FROM events ORDER BY id'),
      outbox: q('SELECT * FROM outbox ORDER BY id'),
      fleet_events: q('SELECT * FROM fleet_events ORDER BY seq'),
      used_tx_ids: q('SELECT * FROM used_tx_ids ORDER BY tx_id'),
      // schema.compatibleFrom is the migration's own (test/ledger/schema-compat.test.ts).
      meta: q("SELECT * FROM meta WHERE key NOT LIKE 'last_probe%' AND key <> 'schema.compatibleFrom' ORDER BY key"),
    };
  } finally {
    db.close();
  }
}

function open(path: string, clock: ManualClock): Ledger {
  return openLedger({ path, decimalPlaces: 2, now: clock.now });
}

test(
  'a schema-4 ledger is migrated to schema 5 in place: every row kept, ids included, the page size unchanged',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const tmp = tempLedgerPath();
    try {
      writeV4Ledger(tmp.path);
      const before = dump(tmp.path);
      assert.equal(before.events!.length, 16);

      open(tmp.path, new ManualClock(NOW)).close();

      const db = new Database(tmp.path, { readonly: true });
      try {
        assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
        assert.equal(
          SCHEMA_VERSION,
          7,
          'v4 -> v5 (this file) -> v6 (cash_sales, test/ledger/cash-sales.test.ts) ' +
            '-> v7 (dex_audits, test/dex/audit/process.test.ts)',
        );
        assert.equal(db.pragma('page_size', { simple: true }), 4096, 'an existing ledger keeps its page size');
        assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
        const names = (
          db.prepare(`SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') ORDER BY name`).all() as Array<{
            name: string;
          }>
        ).map((r) => r.name);
        assert.ok(!names.includes('transactions_state') && !names.includes('events_tx'), names.join(', '));
        assert.ok(names.includes('events_append_only'), 'the append-only trigger is there again');
        const sequences = db.prepare('SELECT name, seq FROM sqlite_sequence ORDER BY name').all();
        assert.deepEqual(sequences, [{ name: 'fleet_events', seq: 7 }], 'only fleet_events keeps its counter');
        // The only foreign key problem is the orphan the old file held.
        assert.deepEqual(db.pragma('foreign_key_check'), [
          { table: 'vends', rowid: null, parent: 'transactions', fkid: 0 },
        ]);
        const located = db
          .prepare('SELECT tx_id, first_event_id AS f, last_event_id AS l FROM transactions ORDER BY tx_id')
          .all();
        assert.deepEqual(located, [
          { tx_id: 'D-paid-aaaa', f: 12, l: 14 },
          { tx_id: 'D-vend-aaaa', f: 15, l: 16 },
          { tx_id: 'S-dead-aaaa', f: 10, l: 11 },
          { tx_id: 'S-done-aaaa', f: 1, l: 8 },
          { tx_id: 'S-open-aaaa', f: 4, l: 6 },
          { tx_id: 'S-pend-aaaa', f: 7, l: 13 },
        ]);
      } finally {
        db.close();
      }
      assert.deepEqual(dump(tmp.path), before, 'every row of every table, as it was');
    } finally {
      tmp.cleanup();
    }
  },
);

test(
  'the migrated ledger is read and written by the product: histories, recovery, delivery, retention, fleet events',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const tmp = tempLedgerPath();
    try {
      writeV4Ledger(tmp.path);
      const clock = new ManualClock(NOW);
      const ledger = open(tmp.path, clock);
      try {
        // Each history comes back whole and in order, out of the interleaved log.
        assert.deepEqual(
          ledger.eventsOf('S-done-aaaa').map((e) => [e.id, e.kind]),
          [
            [1, 'created'],
            [2, 'markAuthorizing'],
            [3, 'markAuthorized'],
            [5, 'settleSession'],
            [8, 'outbox.delivered'],
          ],
        );
        assert.deepEqual(
          ledger.eventsOf('S-pend-aaaa').map((e) => e.id),
          [7, 9, 13],
        );
        assert.deepEqual(
          ledger.vendsOf('S-done-aaaa').map((v) => [v.seq, v.state, v.price]),
          [
            [1, 'success', 1.5],
            [2, 'success', 2.5],
          ],
        );
        assert.equal(ledger.transactionIdUsed('S-pruned-aa'), true);
        assert.deepEqual(ledger.outbox.counts(), { pending: 1, dead: 1, oldestPendingAtMs: OLD + 4000 });
        assert.deepEqual(
          ledger.outbox.due(NOW, 10, []).map((r) => [r.id, r.txId, r.attempts]),
          [[2, 'S-pend-aaaa', 3]],
        );
        assert.deepEqual(
          ledger.fleetEvents.pending(0, 10).map((e) => [e.seq, e.eventId]),
          [
            [6, 'ev-6'],
            [7, 'ev-7'],
          ],
        );

        // Recovery resolves the open ones from the migrated rows: the approved vend without outcome
        // is not charged (Cancel), the paid dynamic sale is voided.
        const bodies = recordingBodies();
        const report = recoverLedger(ledger, bodies);
        assert.deepEqual(report.failed, []);
        assert.deepEqual(bodies.calls.sort(), ['cancel S-open-aaaa 3', 'void D-paid-aaaa 3']);
        const open = ledger.getTransaction('S-open-aaaa')!;
        assert.equal(open.state, 'cancelling');
        const history = ledger.eventsOf('S-open-aaaa');
        assert.deepEqual(
          history.slice(0, 2).map((e) => e.id),
          [4, 6],
          'the old events first',
        );
        assert.ok(
          history.length > 2 && history.slice(2).every((e) => e.id > 16),
          'new events follow the old ones, ids beyond the old counter',
        );

        // New outbox rows get ids after the old ones; delivery and dead-lettering still work on both.
        const rows = ledger.outbox.list({ limit: 10 });
        assert.ok(rows.filter((r) => r.id > 3).length === 2, JSON.stringify(rows.map((r) => [r.id, r.op])));
        ledger.outbox.markDelivered(ledger.outbox.get(2)!, NOW);
        assert.equal(ledger.getTransaction('S-pend-aaaa')?.state, 'settled');
        assert.equal(ledger.eventsOf('S-pend-aaaa').at(-1)?.kind, 'outbox.delivered');

        // A new sale on the migrated file, then retention: the 200-day-old settled sale goes with its
        // events and vends; nothing else is touched.
        ledger.acceptStart({ txId: 'S-new-aaaaa', appUserId: 'u', balance: null });
        ledger.markAuthorizing('S-new-aaaaa', 5);
        assert.deepEqual(
          ledger.eventsOf('S-new-aaaaa').map((e) => e.kind),
          ['created', 'markAuthorizing'],
        );
        const pruned = ledger.outbox.prune(NOW, 90 * DAY);
        assert.deepEqual(
          pruned,
          { outboxRows: 1, transactions: 2 },
          'S-done-aaaa and D-vend-aaaa (closed, old, nothing owed)',
        );
        assert.equal(ledger.getTransaction('S-done-aaaa'), null);
        assert.deepEqual(ledger.eventsOf('S-done-aaaa'), []);
        assert.equal(ledger.transactionIdUsed('S-done-aaaa'), true, 'a pruned id is still refused');

        // fleet_events keeps AUTOINCREMENT: with 7 gone, the next event is 8, never 7 again.
        ledger.fleetEvents.enable({ machineId: 'M-1', currencyCode: 'EUR', maxQueuedAlarms: 10 });
        ledger.fleetEvents.remove([6, 7]);
        ledger.fleetEvents.recordAlarm({ code: 'TEST', state: 'raised', detail: null });
        assert.deepEqual(
          ledger.fleetEvents.pending(0, 10).map((e) => e.seq),
          [8],
        );
      } finally {
        ledger.close();
      }
      const db = new Database(tmp.path, { readonly: true });
      try {
        assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
        const orphanEvents = db
          .prepare('SELECT COUNT(*) AS n FROM events WHERE tx_id NOT IN (SELECT tx_id FROM transactions)')
          .get() as { n: number };
        assert.equal(orphanEvents.n, 0, 'retention left no event of a pruned transaction behind');
      } finally {
        db.close();
      }
      const raw = new Database(tmp.path);
      try {
        assert.throws(() => raw.prepare(`UPDATE events SET kind = 'forged'`).run(), /append-only/);
      } finally {
        raw.close();
      }
    } finally {
      tmp.cleanup();
    }
  },
);
