/**
 * The ledger's DDL at schema version 4 (migrations 1 to 4 as released, copied here on purpose, not
 * imported): a fixture for the upgrade test, so that an edit of the product's migrations cannot
 * change what "a ledger written by the previous release" means.
 */
export const SCHEMA_V4_STEPS: readonly string[] = [
  // migration 1
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
  CREATE INDEX events_tx ON events (tx_id, id);
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
  // migration 2
  `
  ALTER TABLE transactions ADD COLUMN machine_au_time TEXT;   -- MachineAuTime of the Authorization / GenerateQR, as \
sent
  ALTER TABLE transactions ADD COLUMN age_limit INTEGER;      -- BasicInfo.AgeLimitation it carried (null = none)
  `,
  // migration 3
  `
  CREATE TABLE used_tx_ids (
    tx_id            TEXT PRIMARY KEY,
    last_used_at_ms  INTEGER NOT NULL
  ) STRICT, WITHOUT ROWID;
  `,
  // migration 4
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
];
