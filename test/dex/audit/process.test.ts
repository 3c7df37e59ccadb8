/**
 * One audit read through the payment worker's processing over a real SQLite ledger: stored raw
 * and parsed, the interval from the last trusted audit, the reconciliation with the ledger's own
 * vends, and the audit events in parts valid against the fleet contract.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { FleetEvent, MAX_PAYLOAD_BYTES } from '../../../src/fleet/contract/index.js';
import { processAuditRead, type ProcessDeps } from '../../../src/dex/audit/process.js';
import { KEEP_AUDITS, type Ledger } from '../../../src/ledger/index.js';
import { ManualClock, openStaticSession, openTest, tempLedgerPath, withLedger } from '../../ledger/helpers.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const fixture = (name: string) => readFileSync(new URL(`../../../../test/fixtures/dex/${name}`, import.meta.url));
const DAY = 86_400_000;

function deps(ledger: Ledger, tolerance = 0): ProcessDeps {
  return { audits: ledger.dexAudits, device: 'cashless1', decimalPlaces: 2, tolerance };
}

function read(ledger: Ledger, clock: ManualClock, name: string | Buffer, tolerance = 0) {
  return processAuditRead(
    {
      trigger: 'schedule',
      atMs: clock.ms,
      protocol: 'dex-ucs',
      durationMs: 2100,
      bytes: typeof name === 'string' ? fixture(name) : name,
    },
    deps(ledger, tolerance),
  );
}

/** `count` vends paid through qrvend (static QR, each a success), recorded at the clock's time. */
function sell(ledger: Ledger, txId: string, count: number): void {
  openStaticSession(ledger, txId, 100);
  for (let seq = 1; seq <= count; seq++) {
    ledger.recordVendApproved(txId, { seq, item: 11, price: 1.2 });
    ledger.recordVendResult(txId, seq, 'success');
  }
}

test('a1 then a2 with the ledger agreeing (12 cashless vends between): sales, a match, both stored', T, () => {
  withLedger((ledger, clock) => {
    const first = read(ledger, clock, 'vmc-a1.dex');
    assert.equal(first.interval.kind, 'first');
    assert.equal(first.reconciliation.status, 'skipped');
    assert.equal(first.series, 1);
    clock.ms += 3_600_000;
    sell(ledger, 'S-dex-000001', 7);
    sell(ledger, 'S-dex-000002', 5);
    clock.ms += DAY;
    const second = read(ledger, clock, 'vmc-a2.dex');
    assert.equal(second.interval.kind, 'sales');
    assert.equal(second.series, 1);
    assert.equal(second.reconciliation.status, 'match');
    if (second.reconciliation.status === 'match')
      assert.deepEqual(second.reconciliation.ledger, { count: 12, valueMinor: 1440, decimalPlaces: 2 });
    const rows = ledger.dexAudits.recent(10);
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[0]!.raw, fixture('vmc-a2.dex'));
    assert.equal(rows[0]!.checkOk, true);
    assert.equal(JSON.parse(rows[0]!.summary).reconciliation.status, 'match');
  });
});

test(
  'a2 with one cashless vend missing from the ledger: a mismatch ' +
    'naming both figures; within a tolerance of 1 it matches',
  T,
  () => {
    for (const [tolerance, status] of [
      [0, 'mismatch'],
      [1, 'match'],
    ] as const) {
      withLedger((ledger, clock) => {
        read(ledger, clock, 'vmc-a1.dex');
        clock.ms += 1000;
        sell(ledger, 'S-dex-000003', 11);
        clock.ms += DAY;
        const r = read(ledger, clock, 'vmc-a2.dex', tolerance);
        assert.equal(r.reconciliation.status, status);
        if (r.reconciliation.status === 'mismatch') {
          assert.match(
            r.reconciliation.message,
            new RegExp(
              /the VMC counted 12 vends \(DA2, value 1800 at 2 decimals\), /.source +
                /qrvend's ledger 11 \(value 1320 at 2 decimals\) over the same interval/.source,
            ),
          );
        }
      });
    }
  },
);

test("vends outside the interval (before the previous read) are not counted on the ledger's side", T, () => {
  withLedger((ledger, clock) => {
    sell(ledger, 'S-dex-000004', 4);
    clock.ms += 1000;
    read(ledger, clock, 'vmc-a1.dex');
    clock.ms += 1000;
    sell(ledger, 'S-dex-000005', 12);
    clock.ms += DAY;
    assert.equal(read(ledger, clock, 'vmc-a2.dex').reconciliation.status, 'match');
  });
});

test(
  'a file with a bad G85 is kept raw with its reason and not ' +
    'counted: the next good file is compared with the last good one',
  T,
  () => {
    withLedger((ledger, clock) => {
      read(ledger, clock, 'vmc-a1.dex');
      clock.ms += DAY;
      const bad = read(ledger, clock, 'bad-g85.dex');
      assert.equal(bad.checkOk, false);
      assert.match(bad.reason!, /^G85 says/);
      assert.equal(bad.interval.kind, 'unusable');
      const stored = ledger.dexAudits.recent(1)[0]!;
      assert.deepEqual(stored.raw, fixture('bad-g85.dex'));
      assert.equal(stored.counters, null);
      assert.match(stored.reason!, /^G85 says/);
      clock.ms += DAY;
      const good = read(ledger, clock, 'vmc-a2.dex');
      assert.equal(good.interval.kind, 'sales');
      if (good.interval.kind === 'sales') {
        assert.equal(good.interval.elapsedMs, 2 * DAY);
        assert.deepEqual(good.interval.sales.cashless1, { value: 1800, count: 12 });
      }
    });
  },
);

test('a board swap starts series 2 and skips the reconciliation, saying why', T, () => {
  withLedger((ledger, clock) => {
    read(ledger, clock, 'vmc-a3-reset-on-read.dex');
    clock.ms += DAY;
    const r = read(ledger, clock, 'vmc-a4-board-swap.dex');
    assert.equal(r.series, 2);
    assert.equal(r.interval.kind, 'new-series');
    assert.equal(r.reconciliation.status, 'skipped');
    if (r.reconciliation.status === 'skipped') assert.match(r.reconciliation.reason, /went down from 1060 to 10/);
  });
});

test(
  'with the fleet link on, a read is queued as audit events in parts within the message bound that rebuild the file',
  T,
  () => {
    withLedger((ledger, clock) => {
      ledger.fleetEvents.enable({ machineId: 'M1', currencyCode: 'EUR', maxQueuedAlarms: 10 });
      const small = read(ledger, clock, 'vmc-a1.dex');
      // A big file: the fixture with 2,000 unknown vendor lines after DXE (kept, not parsed), 121 KB: four parts.
      const big = Buffer.concat([
        fixture('vmc-a1.dex'),
        Buffer.from('MA9*XYZ*PADDING*0123456789012345678901234567890123456789\r\n'.repeat(2000)),
      ]);
      clock.ms += DAY;
      const large = read(ledger, clock, big);
      const queued = ledger.fleetEvents.pending(0, 100);
      assert.ok(
        queued.every((e) => e.kind === 'sale'),
        'queued in the class that is never dropped',
      );
      const events = queued.map((e) => {
        assert.ok(Buffer.byteLength(e.body) <= MAX_PAYLOAD_BYTES, `event of ${Buffer.byteLength(e.body)} bytes`);
        return FleetEvent.parse(JSON.parse(e.body));
      });
      for (const [outcome, bytes] of [
        [small, fixture('vmc-a1.dex')],
        [large, big],
      ] as const) {
        const parts = events.filter((e) => e.kind === 'audit' && e.auditId === outcome.auditId);
        assert.equal(parts.length, Math.ceil(bytes.length / (32 * 1024)));
        const rebuilt = Buffer.concat(
          parts.map((p) => (p.kind === 'audit' ? Buffer.from(p.raw, 'base64') : Buffer.alloc(0))),
        );
        assert.deepEqual(rebuilt, bytes);
        assert.ok(
          parts[0]!.kind === 'audit' &&
            parts[0]!.summary !== null &&
            parts.slice(1).every((p) => p.kind === 'audit' && p.summary === null),
        );
      }
      assert.equal(events.filter((e) => e.kind === 'audit' && e.auditId === large.auditId).length, 4);
    });
  },
);

test(`only the newest ${KEEP_AUDITS} audits are kept`, T, () => {
  withLedger((ledger, clock) => {
    for (let i = 0; i < KEEP_AUDITS + 3; i++) {
      clock.ms += DAY;
      read(ledger, clock, 'vmc-a1.dex');
    }
    assert.equal(ledger.dexAudits.recent(1000).length, KEEP_AUDITS);
  });
});

test('a schema-6 ledger gets the dex_audits table (migration 7) and keeps its rows', T, () => {
  const tmp = tempLedgerPath();
  try {
    const clock = new ManualClock();
    let ledger = openTest(tmp.path, clock);
    ledger.cashSales.record({ price: 1.15, item: 12 });
    ledger.close();
    const db = new Database(tmp.path);
    db.exec('DROP TABLE dex_audits');
    db.pragma('user_version = 6');
    db.close();
    ledger = openTest(tmp.path, clock);
    assert.deepEqual(ledger.cashSales.totals(), { count: 1, sumMinor: 115 });
    read(ledger, clock, 'vmc-a1.dex');
    assert.equal(ledger.dexAudits.recent(5).length, 1);
    ledger.close();
  } finally {
    tmp.cleanup();
  }
});
