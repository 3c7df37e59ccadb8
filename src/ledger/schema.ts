/**
 * The ledger's schema and its migrations. The version lives in `PRAGMA user_version`, so a reader
 * (doctor, `qrvend outbox`) learns it without knowing any table. Migrations only ever append: a
 * released step is never edited, a new one is added with the next number.
 *
 * Rollback of a release (docs/releases.md, "Ledger migrations"): the release before may have to
 * open a ledger a newer one migrated, with the sales the newer one recorded during its trial. So
 * every step says whether it is additive (new tables, indexes, columns that are nullable or have a
 * default: code of an older schema reads and writes such a file as if the step were not there)
 * or not. The file keeps, in meta, the lowest schema version whose code can still read and write
 * it (COMPATIBLE_FROM); a build opens a newer file when its own version is within that bound, as it
 * is, migrating nothing, and refuses it otherwise.
 *
 * Times are epoch milliseconds (INTEGER): the drainer compares them with an injectable clock and
 * the CLI renders them. Amounts are integer minor units with the decimal places stored beside
 * them on each transaction, so a later change of `machine.decimalPlaces` cannot rescale history.
 */
import type Database from 'better-sqlite3';
import { ErrorCodes, QrvendError } from '../core/errors.js';

const MIGRATIONS: readonly string[] = [
  // 1: transactions, vend lines, the append-only event log, the outbox, a key/value meta table.
  `
  CREATE TABLE transactions (
    tx_id             TEXT PRIMARY KEY,
    flow              TEXT NOT NULL CHECK (flow IN ('static', 'dynamic')),
    state             TEXT NOT NULL,
    decimal_places    INTEGER NOT NULL,
    amount_minor      INTEGER,          -- static: Authorization amount sent; dynamic: the vend price
    auth_amount_minor INTEGER,          -- static: AuthAmount the gateway approved
    item              INTEGER,          -- dynamic: the MDB item number
    request_id        TEXT,             -- dynamic: the machine loop's vend request id
    start_data        TEXT,             -- static: non-secret Start data (AppUserId, Balance) as JSON
    payment_info      TEXT,             -- PaymentInfo exactly as the gateway returned it (JSON text)
    qr_data           TEXT,             -- dynamic: QRData as GenerateQR returned it (JSON text)
    decline_code      INTEGER,
    created_at_ms     INTEGER NOT NULL,
    updated_at_ms     INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX transactions_state ON transactions (state);

  CREATE TABLE vends (
    tx_id          TEXT NOT NULL REFERENCES transactions (tx_id),
    seq            INTEGER NOT NULL,
    item           INTEGER NOT NULL,
    price_minor    INTEGER NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('approved', 'success', 'failed', 'cancelled', 'reset', 'timeout', \
'expired')),
    created_at_ms  INTEGER NOT NULL,
    updated_at_ms  INTEGER NOT NULL,
    PRIMARY KEY (tx_id, seq)
  ) STRICT;

  CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tx_id       TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    from_state  TEXT,
    to_state    TEXT,
    detail      TEXT
  ) STRICT;
  -- The log is append-only: rows are never changed (only retention deletes whole closed histories).
  CREATE TRIGGER events_append_only BEFORE UPDATE ON events
  BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;

  CREATE TABLE outbox (
    id                   INTEGER PRIMARY KEY AUTOINCREMENT,
    tx_id                TEXT NOT NULL REFERENCES transactions (tx_id),
    op                   TEXT NOT NULL CHECK (op IN ('Settlement', 'Cancel', 'Void')),
    body                 TEXT NOT NULL,   -- the request body, sent byte for byte on every attempt
    status               TEXT NOT NULL CHECK (status IN ('pending', 'done', 'dead')),
    enqueued_at_ms       INTEGER NOT NULL,
    window_started_at_ms INTEGER NOT NULL, -- the retry window runs from here (reset by a manual retry)
    attempts             INTEGER NOT NULL DEFAULT 0,
    next_attempt_at_ms   INTEGER NOT NULL,
    last_error           TEXT,
    last_code            INTEGER,
    done_at_ms           INTEGER,
    dead_at_ms           INTEGER
  ) STRICT;
  CREATE INDEX outbox_due ON outbox (status, next_attempt_at_ms);
  CREATE INDEX outbox_tx ON outbox (tx_id, id);
  CREATE INDEX outbox_done ON outbox (status, done_at_ms);

  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;
  `,
  // 2: what a closing request repeats from the authorization it closes (docs/decisions/gateway-interface.md), so a
  // Settlement, Cancel or Void built after a restart carries the same values as a live one.
  `
  ALTER TABLE transactions ADD COLUMN machine_au_time TEXT;   -- MachineAuTime of the Authorization / GenerateQR, as \
sent
  ALTER TABLE transactions ADD COLUMN age_limit INTEGER;      -- BasicInfo.AgeLimitation it carried (null = none)
  `,
  // 3: TransactionIds of pruned transactions, kept longer than the transactions themselves so a
  // replayed Start is still refused (996) after retention removed its history (docs/decisions/hardening.md item 7).
  `
  CREATE TABLE used_tx_ids (
    tx_id            TEXT PRIMARY KEY,
    last_used_at_ms  INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
  `,
  // 4: the fleet link's outgoing events (docs/decisions/fleet-link.md, docs/decisions/fleet-link-first.md): a sale is
  // written in the
  // same transaction as the ledger change that closed its payment, an alarm when it is raised or
  // cleared; a row is deleted only once the broker acknowledged it (PUBACK). `seq` orders them;
  // `event_id` is what the operator deduplicates by, the same on every republish.
  `
  CREATE TABLE fleet_events (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id       TEXT NOT NULL UNIQUE,
    kind           TEXT NOT NULL CHECK (kind IN ('sale', 'alarm')),
    body           TEXT NOT NULL,   -- the JSON published on <prefix>/<machineId>/events, byte for byte
    created_at_ms  INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX fleet_events_kind ON fleet_events (kind, seq);
  `,
  // 5: fewer pages per commit (SD-card wear, docs/decisions/benchmarks.md; BENCHMARKS.md). Every commit appends each
  // page it changed to the WAL, so every b-tree a write touches costs a page, and a b-tree keyed
  // by a random TransactionId costs one or more at a random place:
  // - transactions_state went: no query can use it (recovery asks for states NOT IN a list, the
  //   hourly retention for closed states, which are nearly all rows), and every move changed it;
  // - events_tx (tx_id, id) went too: a transaction's events are found from its own row instead,
  //   which says where in the log they start and end (first_event_id, last_event_id; the row is
  //   written in most of the commits that append an event anyway), then by id, which orders the
  //   log;
  // - events and outbox lose AUTOINCREMENT, so no commit writes sqlite_sequence for them. Their ids
  //   only order rows (the log; a transaction's outbox requests): max(id) + 1 does that; an id can
  //   come back only after every later row was deleted, and nothing outside the ledger keeps one.
  //   fleet_events keeps it: the fleet worker's cursor needs seq never to repeat;
  // - vends is keyed by (tx_id, seq) alone (WITHOUT ROWID; its rows are small): one b-tree, not a
  //   table and its key's index;
  // - the outbox's due and delivered indexes hold only the rows they are for (pending; done), so
  //   enqueueing a request no longer touches the delivered index.
  // Rows are copied as they are, ids included; the append-only trigger is created again.
  `
  ALTER TABLE transactions ADD COLUMN first_event_id INTEGER;  -- this transaction's first event in the log (events.id)
  ALTER TABLE transactions ADD COLUMN last_event_id INTEGER;   -- and its last
  UPDATE transactions SET
    first_event_id = (SELECT MIN(e.id) FROM events e WHERE e.tx_id = transactions.tx_id),
    last_event_id = (SELECT MAX(e.id) FROM events e WHERE e.tx_id = transactions.tx_id);

  DROP INDEX IF EXISTS transactions_state;

  CREATE TABLE events_v5 (
    id          INTEGER PRIMARY KEY,
    tx_id       TEXT NOT NULL,
    at_ms       INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    from_state  TEXT,
    to_state    TEXT,
    detail      TEXT
  ) STRICT;
  INSERT INTO events_v5 (id, tx_id, at_ms, kind, from_state, to_state, detail)
    SELECT id, tx_id, at_ms, kind, from_state, to_state, detail FROM events ORDER BY id;
  DROP TABLE events;
  ALTER TABLE events_v5 RENAME TO events;
  CREATE TRIGGER events_append_only BEFORE UPDATE ON events
  BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;

  CREATE TABLE vends_v5 (
    tx_id          TEXT NOT NULL REFERENCES transactions (tx_id),
    seq            INTEGER NOT NULL,
    item           INTEGER NOT NULL,
    price_minor    INTEGER NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('approved', 'success', 'failed', 'cancelled', 'reset', 'timeout', \
'expired')),
    created_at_ms  INTEGER NOT NULL,
    updated_at_ms  INTEGER NOT NULL,
    PRIMARY KEY (tx_id, seq)
  ) STRICT, WITHOUT ROWID;
  INSERT INTO vends_v5 (tx_id, seq, item, price_minor, state, created_at_ms, updated_at_ms)
    SELECT tx_id, seq, item, price_minor, state, created_at_ms, updated_at_ms FROM vends;
  DROP TABLE vends;
  ALTER TABLE vends_v5 RENAME TO vends;

  CREATE TABLE outbox_v5 (
    id                   INTEGER PRIMARY KEY,
    tx_id                TEXT NOT NULL REFERENCES transactions (tx_id),
    op                   TEXT NOT NULL CHECK (op IN ('Settlement', 'Cancel', 'Void')),
    body                 TEXT NOT NULL,   -- the request body, sent byte for byte on every attempt
    status               TEXT NOT NULL CHECK (status IN ('pending', 'done', 'dead')),
    enqueued_at_ms       INTEGER NOT NULL,
    window_started_at_ms INTEGER NOT NULL, -- the retry window runs from here (reset by a manual retry)
    attempts             INTEGER NOT NULL DEFAULT 0,
    next_attempt_at_ms   INTEGER NOT NULL,
    last_error           TEXT,
    last_code            INTEGER,
    done_at_ms           INTEGER,
    dead_at_ms           INTEGER
  ) STRICT;
  INSERT INTO outbox_v5 (id, tx_id, op, body, status, enqueued_at_ms, window_started_at_ms, attempts, \
next_attempt_at_ms, last_error, last_code, done_at_ms, dead_at_ms)
    SELECT id, tx_id, op, body, status, enqueued_at_ms, window_started_at_ms, attempts, next_attempt_at_ms, \
last_error, last_code, done_at_ms, dead_at_ms
    FROM outbox ORDER BY id;
  DROP TABLE outbox;
  ALTER TABLE outbox_v5 RENAME TO outbox;
  CREATE INDEX outbox_due ON outbox (next_attempt_at_ms) WHERE status = 'pending';
  CREATE INDEX outbox_tx ON outbox (tx_id, id);
  CREATE INDEX outbox_done ON outbox (done_at_ms) WHERE status = 'done';
  `,
  // 6: cash sales the VMC reports (MDB CASH SALE, docs/decisions/real-vending-machines.md): sales another device was
  // paid for,
  // never charged. One small row each and no index but the key (SD-card wear); pruned with the
  // outbox's retention. Their fleet events go in fleet_events with kind 'sale' (a delivery class:
  // never dropped, like sales), the body saying "cash-sale", so that table is not rebuilt.
  `
  CREATE TABLE cash_sales (
    id              INTEGER PRIMARY KEY,
    at_ms           INTEGER NOT NULL,
    item            INTEGER NOT NULL,   -- MDB item number, flag bits included (b15 free, b14 test, b13 negative, b12 \
token vend)
    price_minor     INTEGER NOT NULL,
    decimal_places  INTEGER NOT NULL
  ) STRICT;
  `,
  // 7: the VMC's own audit (EVA-DTS over its DEX jack, docs/decisions/dex-audit.md): a new table only, so a qrvend
  // that knows 6 steps can still read every table it knows. The raw file is kept as the VMC sent
  // it, parsed or not (a file that fails its check keeps its reason); `counters` is set only on a
  // file whose figures can be trusted, and is what the next read's interval is computed from.
  // Audit fleet events go to fleet_events as kind 'sale' (a delivery class: never dropped), the
  // body saying "audit", so that table is not rebuilt.
  `
  CREATE TABLE dex_audits (
    id              INTEGER PRIMARY KEY,
    audit_id        TEXT NOT NULL UNIQUE,
    read_at_ms      INTEGER NOT NULL,
    trigger         TEXT NOT NULL,    -- schedule | command | technician
    protocol        TEXT NOT NULL,    -- dex-ucs | ddcmp
    duration_ms     INTEGER NOT NULL,
    raw             BLOB NOT NULL,
    check_ok        INTEGER NOT NULL, -- 1: G85, SE counts and envelope held
    reason          TEXT,             -- why the figures are not used (null when check_ok)
    series          INTEGER NOT NULL, -- counters are comparable within one series only
    counters        TEXT,             -- JSON: the lifetime counters the next interval starts from
    summary         TEXT NOT NULL     -- JSON: what was parsed, the interval and its reconciliation
  ) STRICT;
  `,
];

/**
 * Steps older code cannot use a file after: 1-5 (before the rule, and 5 rebuilt tables with new
 * constraints). Every later step is additive unless it is listed here, with the reason. A step
 * listed here makes a rollback to a release of an older schema impossible: that release refuses
 * the file (docs/releases.md says what to do instead).
 */
const NOT_ADDITIVE: ReadonlySet<number> = new Set([1, 2, 3, 4, 5]);

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The lowest schema version whose code can read and write a file of SCHEMA_VERSION. */
export const COMPATIBLE_FROM = Math.max(...[...NOT_ADDITIVE].filter((v) => v <= SCHEMA_VERSION));

/** Where the file keeps its COMPATIBLE_FROM (the meta table exists from step 1). */
export const COMPATIBLE_FROM_KEY = 'schema.compatibleFrom';

/** What an additive step may not do: drop, rename or rebuild what older code uses. */
export function additiveProblems(sql: string): string[] {
  const problems: string[] = [];
  if (/\bDROP\s+(TABLE|COLUMN|INDEX|TRIGGER|VIEW)\b/i.test(sql)) problems.push('drops something older code may use');
  if (/\bRENAME\b/i.test(sql)) problems.push('renames something older code may use');
  if (/\bADD\s+(COLUMN\s+)?\w+\s+[^,;]*\bNOT\s+NULL\b(?![^,;]*\bDEFAULT\b)/i.test(sql))
    problems.push('adds a NOT NULL column without a default: older code cannot insert a row');
  return problems;
}

/**
 * Every step after the rule's first ones: additive unless NOT_ADDITIVE lists it (test/ledger/schema-compat.test.ts).
 */
export const MIGRATION_STEPS: ReadonlyArray<{ version: number; sql: string; additive: boolean }> = MIGRATIONS.map(
  (sql, i) => ({ version: i + 1, sql, additive: !NOT_ADDITIVE.has(i + 1) }),
);

export function schemaVersionOf(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/** Brings the file up to SCHEMA_VERSION, each step in its own transaction. */
export function migrate(db: Database.Database, path: string): void {
  const current = schemaVersionOf(db);
  if (current > SCHEMA_VERSION) {
    // A newer release migrated it (a rollback, or a downgrade by hand): usable as it is when every
    // step since ours was additive, as the file says; never migrated down.
    if (usableByThisBuild(db)) return;
    const from = compatibleFromOf(db);
    throw new QrvendError(
      ErrorCodes.LEDGER_SCHEMA_UNSUPPORTED,
      `ledger ${path} has schema version ${current}, newer than this qrvend understands (${SCHEMA_VERSION}), and ` +
        `${from === null ? 'does not say which older versions can use it' : `needs code of schema ${from} or later`}`,
      {
        hint:
          'install the qrvend version that wrote this ledger (or a later one); never move the file aside to ' +
          'start without it: it holds the sales not yet settled',
      },
    );
  }
  if (current === SCHEMA_VERSION) {
    if (!db.readonly && compatibleFromOf(db) !== COMPATIBLE_FROM) writeCompatibleFrom(db);
    return;
  }
  // A step that rebuilds a table copies its rows as they are: foreign keys are not enforced while
  // migrating (SQLite's own procedure for schema changes; the pragma is a no-op inside a
  // transaction, so it is set around them), so no row can make the upgrade fail or be left behind.
  const enforced = db.pragma('foreign_keys', { simple: true }) === 1;
  db.pragma('foreign_keys = OFF');
  try {
    for (let version = current; version < SCHEMA_VERSION; version++) {
      db.transaction(() => {
        db.exec(MIGRATIONS[version]!);
        db.pragma(`user_version = ${version + 1}`);
      }).immediate();
    }
    writeCompatibleFrom(db);
  } finally {
    if (enforced) db.pragma('foreign_keys = ON');
  }
}

/** This build reads and writes the file: its schema, or a newer one every step since was additive to. */
export function usableByThisBuild(db: Database.Database): boolean {
  const version = schemaVersionOf(db);
  if (version === SCHEMA_VERSION) return true;
  const from = version > SCHEMA_VERSION ? compatibleFromOf(db) : null;
  return from !== null && from <= SCHEMA_VERSION;
}

/** The file's COMPATIBLE_FROM; null when a build before the rule wrote it, or it is unreadable. */
export function compatibleFromOf(db: Database.Database): number | null {
  try {
    const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(COMPATIBLE_FROM_KEY) as
      { value: string } | undefined;
    return row !== undefined && /^\d{1,6}$/.test(row.value) ? Number(row.value) : null;
  } catch {
    return null;
  }
}

function writeCompatibleFrom(db: Database.Database): void {
  db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(
    COMPATIBLE_FROM_KEY,
    String(COMPATIBLE_FROM),
  );
}
