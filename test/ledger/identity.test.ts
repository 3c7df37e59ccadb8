/**
 * The identity marker beside the ledger after a power cut (docs/decisions/power-cuts.md): the ledger is the authority,
 * the marker its witness. A torn marker (empty, half-written, zero-filled, unreadable) beside a
 * sound ledger that carries an identity is rewritten from the ledger; a ledger that is missing,
 * empty, without an identity, or with another identity than a readable marker stays lost. The
 * daemon's open (openLedger) and the technician's view (ledgerLossOf: doctor, acknowledge-loss)
 * must agree. Real SQLite files in a temp directory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/core/log.js';
import { isLedgerLost, ledgerLossOf, markerPathOf, readMarker, tornMarkerOf } from '../../src/ledger/identity.js';
import { ManualClock, openStaticSession, openTest, tempLedgerPath, type TempDir } from './helpers.js';

function capture() {
  const chunks: string[] = [];
  const destination = new Writable({ write: (c, _e, cb) => (chunks.push(String(c)), cb()) });
  return {
    logger: createLogger({ level: 'info', destination }),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** A ledger as the daemon leaves it: identity in header and marker, one open session with a vend reported. */
function healthyLedger(tmp: TempDir, clock: ManualClock): number {
  const ledger = openTest(tmp.path, clock);
  openStaticSession(ledger, 'TX-OPEN');
  ledger.recordVendApproved('TX-OPEN', { seq: 1, item: 7, price: 1.5 });
  ledger.recordVendResult('TX-OPEN', 1, 'success');
  ledger.close();
  const marker = readMarker(tmp.path);
  assert.equal(marker.kind, 'id');
  return (marker as { id: number }).id;
}

const mode = (path: string) => statSync(path).mode & 0o777;

/** Torn markers as a power cut leaves them (ext4 data=ordered: empty, or blocks not yet written back). */
const TORN: Array<[string, (id: number) => string | Buffer]> = [
  ['empty', () => ''],
  ['half-written (cut inside the digits)', (id) => `qrvend-ledger ${String(id).slice(0, 3)}`],
  ['half-written (cut before the identity)', () => 'qrvend-led'],
  ['zero-filled (size written, data not)', (id) => Buffer.alloc(`qrvend-ledger ${id}\n`.length)],
];

for (const [name, content] of TORN) {
  test(
    `a ${name} marker beside a healthy ledger is rewritten from ` +
      `the ledger: not lost, warn logged, the open session kept`,
    () => {
      const tmp = tempLedgerPath();
      const clock = new ManualClock();
      try {
        const id = healthyLedger(tmp, clock);
        writeFileSync(markerPathOf(tmp.path), content(id));
        assert.equal(readMarker(tmp.path).kind, 'torn');
        assert.equal(ledgerLossOf(tmp.path), null, 'doctor and acknowledge-loss do not call it lost');
        assert.notEqual(tornMarkerOf(tmp.path), null, 'doctor can say the marker is torn');

        const { logger, lines } = capture();
        const ledger = openTest(tmp.path, clock, { logger });
        assert.equal(ledger.corruptionAlarm, null, 'the ledger was not moved aside');
        assert.equal(
          ledger.getTransaction('TX-OPEN')?.state,
          'session_open',
          'the open session is still there for recovery',
        );
        ledger.close();
        assert.equal(
          readFileSync(markerPathOf(tmp.path), 'utf8'),
          `qrvend-ledger ${id}\n`,
          'the marker witnesses the ledger again',
        );
        assert.equal(mode(markerPathOf(tmp.path)), 0o600);
        const repaired = lines().filter((l) => l.event === 'ledger.marker.repaired');
        assert.equal(repaired.length, 1);
        assert.equal(repaired[0]!.level, 'warn');
        assert.equal(repaired[0]!.identity, id);
        assert.equal(tornMarkerOf(tmp.path), null);
        assert.deepEqual(
          readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp')),
          [],
          'no temporary file left beside the marker',
        );
      } finally {
        tmp.cleanup();
      }
    },
  );
}

test('a missing marker beside a healthy ledger is written from the ledger (its identity kept, not a new one)', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  try {
    const id = healthyLedger(tmp, clock);
    rmSync(markerPathOf(tmp.path));
    assert.equal(ledgerLossOf(tmp.path), null);
    const ledger = openTest(tmp.path, clock);
    assert.equal(ledger.getTransaction('TX-OPEN')?.state, 'session_open');
    ledger.close();
    assert.deepEqual(readMarker(tmp.path), { kind: 'id', id });
  } finally {
    tmp.cleanup();
  }
});

/** What the daemon's open raises, or null when it opened. */
function openError(tmp: TempDir, clock: ManualClock): unknown {
  try {
    openTest(tmp.path, clock).close();
    return null;
  } catch (err) {
    return err;
  }
}

test('a healthy marker beside an empty ledger is still lost, at open and for doctor; nothing is rewritten', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  try {
    const id = healthyLedger(tmp, clock);
    for (const suffix of ['', '-wal', '-shm']) if (existsSync(tmp.path + suffix)) truncateSync(tmp.path + suffix, 0);
    const err = openError(tmp, clock);
    assert.ok(isLedgerLost(err), String(err));
    assert.match((err as Error).message, /empty \(truncated\)/);
    assert.match(ledgerLossOf(tmp.path) ?? '', /empty \(truncated\)/);
    assert.equal(statSync(tmp.path).size, 0, 'the empty file was not turned into a fresh ledger');
    assert.deepEqual(readMarker(tmp.path), { kind: 'id', id }, 'the marker is left as the record');
  } finally {
    tmp.cleanup();
  }
});

test(
  'a torn marker beside a missing, an empty, or an identity-less ledger is ' +
    'lost: a marker says a ledger existed here, and there is nothing to witness',
  () => {
    const cases: Array<[string, (path: string) => void, RegExp]> = [
      ['missing', (p) => rmSync(p), /missing/],
      ['empty', (p) => truncateSync(p, 0), /empty \(truncated\)/],
      ['a database without an identity', (p) => new Database(p).exec('CREATE TABLE other(x)').close(), /no identity/],
    ];
    for (const [name, make, why] of cases) {
      const tmp = tempLedgerPath();
      const clock = new ManualClock();
      try {
        healthyLedger(tmp, clock);
        for (const suffix of ['', '-wal', '-shm']) rmSync(tmp.path + suffix, { force: true });
        writeFileSync(tmp.path, '');
        make(tmp.path);
        writeFileSync(markerPathOf(tmp.path), '');
        const err = openError(tmp, clock);
        assert.ok(isLedgerLost(err), `${name}: ${String(err)}`);
        assert.match((err as Error).message, why, name);
        assert.match(ledgerLossOf(tmp.path) ?? '', why, `${name}: doctor agrees`);
        assert.equal(readFileSync(markerPathOf(tmp.path), 'utf8'), '', `${name}: the torn marker is not rewritten`);
      } finally {
        tmp.cleanup();
      }
    }
  },
);

test('a readable marker with another identity than the ledger is lost (another file took its place)', () => {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  try {
    const id = healthyLedger(tmp, clock);
    const other = id === 1 ? 2 : id - 1;
    writeFileSync(markerPathOf(tmp.path), `qrvend-ledger ${other}\n`);
    const err = openError(tmp, clock);
    assert.ok(isLedgerLost(err), String(err));
    assert.match(ledgerLossOf(tmp.path) ?? '', new RegExp(`identity ${id}, the marker ${other}`));
  } finally {
    tmp.cleanup();
  }
});

test(
  'a torn marker beside a ledger that passes quick_check but fails ' +
    'integrity_check is not repaired: the file is moved aside',
  () => {
    const tmp = tempLedgerPath();
    const clock = new ManualClock();
    try {
      // Two files built alike except for the indexed values; the index page of one copied into the
      // other leaves every page well formed (quick_check ok) and the index disagreeing with its table.
      const build = (path: string, values: number[]) => {
        const db = new Database(path);
        db.pragma('page_size = 512');
        db.exec('CREATE TABLE t(a, b); CREATE INDEX t_a ON t(a);');
        for (const v of values) db.prepare('INSERT INTO t VALUES (?, 0)').run(v);
        db.pragma('application_id = 4242');
        const root = (db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 't_a'").get() as { rootpage: number })
          .rootpage;
        db.close();
        return root;
      };
      const donor = `${tmp.path}.donor`;
      const root = build(tmp.path, [1, 3]);
      assert.equal(build(donor, [5, 7]), root);
      const bytes = readFileSync(tmp.path);
      readFileSync(donor).copy(bytes, (root - 1) * 512, (root - 1) * 512, root * 512);
      writeFileSync(tmp.path, bytes);
      const look = new Database(tmp.path, { readonly: true });
      assert.deepEqual(look.pragma('quick_check'), [{ quick_check: 'ok' }]);
      assert.notDeepEqual(look.pragma('integrity_check'), [{ integrity_check: 'ok' }]);
      look.close();
      writeFileSync(markerPathOf(tmp.path), '');

      const { logger, lines } = capture();
      const ledger = openTest(tmp.path, clock, { logger });
      assert.ok(ledger.corruptionAlarm !== null, 'the damaged file is moved aside with the alarm');
      assert.match(ledger.corruptionAlarm.reason, /integrity_check/);
      ledger.close();
      assert.equal(
        lines().some((l) => l.event === 'ledger.marker.repaired'),
        false,
        'a damaged ledger does not witness itself',
      );
    } finally {
      tmp.cleanup();
    }
  },
);
