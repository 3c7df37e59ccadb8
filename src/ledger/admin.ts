/**
 * The technician's view of the outbox (`qrvend outbox`), beside a possibly running daemon: opens an
 * existing ledger only (never creates, migrates or moves a file aside), read-only for listings.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { silentLogger } from '../core/log.js';
import { LedgerConnection, realTimers } from './connection.js';
import { applyDurabilityPragmas, closeQuietly } from './db.js';
import { LedgerOutbox } from './outbox.js';
import { SCHEMA_VERSION, schemaVersionOf, usableByThisBuild } from './schema.js';
import { describeError } from './sqlite-errors.js';
import type { OutboxCounts, OutboxRow, OutboxStatus } from './types.js';

function openExisting(path: string, readonly: boolean): Database.Database {
  if (!existsSync(path)) {
    throw new QrvendError(ErrorCodes.LEDGER_NOT_FOUND, `no ledger at ${path}`, {
      hint:
        'check store.path in the configuration (--config FILE or QRVEND_CONFIG); qrvend run creates the ledger ' +
        'on its first start',
    });
  }
  let db: Database.Database | null = null;
  try {
    db = new Database(path, { readonly, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    const version = schemaVersionOf(db);
    // A newer release's file that this one can use (a rollback: src/ledger/schema.ts) is read too.
    if (!usableByThisBuild(db)) {
      throw new QrvendError(
        ErrorCodes.LEDGER_SCHEMA_UNSUPPORTED,
        `ledger ${path} has schema version ${version}, this qrvend reads version ${SCHEMA_VERSION}`,
        {
          hint:
            version === 0
              ? 'this file is not a qrvend ledger, or qrvend run has not started on it yet'
              : 'use the qrvend version that matches the running daemon',
        },
      );
    }
    if (!readonly) applyDurabilityPragmas(db);
    return db;
  } catch (err) {
    closeQuietly(db);
    if (err instanceof QrvendError) throw err;
    throw new QrvendError(ErrorCodes.LEDGER_CORRUPT, `ledger ${path} cannot be read: ${describeError(err)}`, {
      hint: 'run `qrvend doctor`; a damaged ledger is moved aside by the next `qrvend run`',
      cause: err,
    });
  }
}

function withOutbox<T>(path: string, readonly: boolean, fn: (outbox: LedgerOutbox) => T): T {
  const db = openExisting(path, readonly);
  const conn = new LedgerConnection(db, {
    path,
    logger: silentLogger(),
    now: Date.now,
    timers: realTimers,
    probeIntervalMs: 60_000,
  });
  try {
    return fn(new LedgerOutbox(conn, Date.now));
  } finally {
    conn.close();
  }
}

export interface OutboxListing {
  counts: OutboxCounts;
  rows: OutboxRow[];
}

/** Counts and rows, newest first; `status` undefined = all rows (the recent ones). */
export function readOutbox(path: string, options: { status?: OutboxStatus; limit: number }): OutboxListing {
  return withOutbox(path, true, (outbox) => ({ counts: outbox.counts(), rows: outbox.list(options) }));
}

/** Moves a dead row back to pending with a fresh retry window; a running drainer picks it up. */
export function retryDeadOutboxRow(path: string, id: number): OutboxRow {
  return withOutbox(path, false, (outbox) => outbox.retryDead(id));
}
