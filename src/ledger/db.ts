/**
 * Opening the ledger file: integrity check before anything is written, durability pragmas on every
 * connection, migrations, and the damaged-file path (copy aside, replace, raise an alarm, keep
 * running: docs/decisions/reliability-bars.md).
 */
import Database from 'better-sqlite3';
import { chmodSync, existsSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { copyFileDurably, fsyncDir } from '../core/durable-file.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import {
  acknowledgeLoss,
  adoptIdentity,
  markerPathOf,
  prepareLedgerFiles,
  LEDGER_FILE_MODE,
  type MarkerRepair,
} from './identity.js';
import { migrate } from './schema.js';
import { describeError, isCorruption, isStorageFailure } from './sqlite-errors.js';

/** Raised once per start when a damaged ledger was moved aside and replaced by an empty one. */
export interface CorruptionAlarm {
  path: string;
  /** Where the damaged file (and its -wal/-shm, when present) now lives, kept for inspection. */
  movedTo: string;
  reason: string;
  atMs: number;
}

export interface OpenedDatabase {
  db: Database.Database;
  alarm: CorruptionAlarm | null;
}

/** The file failed verification; `db` is still open so the evidence is copied before closing touches it. */
class DamagedFile extends Error {
  readonly code = 'SQLITE_CORRUPT';
  constructor(
    message: string,
    readonly db: Database.Database,
  ) {
    super(message);
  }
}

/** Page size of a new ledger file, bytes. */
export const LEDGER_PAGE_SIZE = 512;
/** WAL frames between automatic checkpoints. */
export const WAL_AUTOCHECKPOINT_FRAMES = 4000;

/**
 * WAL lets readers (the CLI, doctor) run beside the writer. synchronous must be set on every
 * connection: a fresh connection on an existing WAL file comes up at NORMAL, which may lose the
 * last commits on power loss.
 */
export function applyDurabilityPragmas(db: Database.Database): void {
  db.pragma('busy_timeout = 5000');
  // Every commit appends each page it changed to the WAL as a whole frame, and a sale is a handful
  // of commits touching ~7 pages each (row, indexes, event, sqlite_sequence; ~4 since schema 5): with 4 KiB pages a
  // sale wrote ~250 KiB to the SD card; 512-byte pages cut the commits' share about 3x (docs/decisions/benchmarks.md,
  // BENCHMARKS.md). Only a new, empty file takes it (before WAL is switched on); an existing
  // ledger keeps its page size.
  db.pragma(`page_size = ${LEDGER_PAGE_SIZE}`);
  const mode = db.pragma('journal_mode = WAL', { simple: true });
  if (mode !== 'wal')
    throw new QrvendError(
      ErrorCodes.LEDGER_WRITE_FAILED,
      `the ledger could not switch to WAL mode (got ${String(mode)})`,
    );
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  // better-sqlite3 builds SQLite with a 16 MB page cache per connection; the ledger's working set
  // (open transactions, the outbox head) is tiny, and the controller's memory budget is not.
  db.pragma('cache_size = -2000');
  // A checkpoint copies every page changed since the last one into the ledger file; the hot pages
  // (indexes, the event log's tail) are copied once per checkpoint however often they changed, so
  // fewer, larger checkpoints write less: one per 4,000 frames (2 MB of WAL at 512-byte pages,
  // about 110 sales since schema 5) instead of SQLite's 1,000. The WAL file is cut back to 4 MB
  // after a checkpoint if a large transaction (a migration, retention) grew it.
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_FRAMES}`);
  db.pragma('journal_size_limit = 4194304');
}

/** `ok`, or the problems integrity_check reported, joined. Throws when the file is not a database. */
export function integrityOf(db: Database.Database): string {
  const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
  const messages = rows.map((r) => r.integrity_check);
  return messages.length === 1 && messages[0] === 'ok' ? 'ok' : messages.join('; ');
}

function connect(path: string, logger: Logger): Database.Database {
  const db = new Database(path);
  try {
    // integrity_check, not quick_check: a torn marker is rewritten from this ledger only when the
    // whole file (indexes against their tables too) is sound.
    const verdict = integrityOf(db);
    if (verdict !== 'ok') throw new DamagedFile(`integrity_check: ${verdict}`, db);
    applyDurabilityPragmas(db);
    const repair = adoptIdentity(db, path);
    if (repair !== null) logRepair(logger, path, repair);
    migrate(db, path);
    // SQLite gives -wal/-shm the ledger's mode; said again in case an older file was looser.
    for (const suffix of ['-wal', '-shm']) if (existsSync(path + suffix)) chmodSync(path + suffix, LEDGER_FILE_MODE);
    return db;
  } catch (err) {
    if (err instanceof DamagedFile) throw err;
    if (isCorruption(err)) throw new DamagedFile(describeError(err), db);
    closeQuietly(db);
    throw err;
  }
}

function logRepair(logger: Logger, path: string, repair: MarkerRepair): void {
  logger.warn(
    { event: 'ledger.marker.repaired', path, marker: markerPathOf(path), identity: repair.id, reason: repair.why },
    `ledger identity marker was torn (${repair.why}; a power cut while it was written): rewritten from the ledger, ` +
      `which passed its integrity check`,
  );
}

export function closeQuietly(db: Database.Database | null): void {
  try {
    db?.close();
  } catch {
    // A connection that failed on I/O may fail to close too; it is dropped either way.
  }
}

function stamp(atMs: number): string {
  return new Date(atMs).toISOString().replace(/[:.]/g, '-');
}

/**
 * Copies the damaged file and its companions aside, then closes the broken connection (closing a
 * WAL connection may checkpoint or delete the -wal, which would alter the evidence), then removes
 * the originals so a fresh ledger can take their place. The copies are durable before the
 * originals go: they may hold undelivered settlements, and a power cut must not leave neither.
 */
function moveAside(path: string, atMs: number, db: Database.Database): string {
  const movedTo = `${path}.corrupt-${stamp(atMs)}`;
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(path + suffix)) copyFileDurably(path + suffix, movedTo + suffix);
  }
  closeQuietly(db);
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(path + suffix)) unlinkSync(path + suffix);
  }
  fsyncDir(dirname(path));
  return movedTo;
}

function storageError(path: string, err: unknown): QrvendError {
  return new QrvendError(
    ErrorCodes.LEDGER_WRITE_FAILED,
    `ledger ${path} cannot be opened for writing (${describeError(err)})`,
    {
      hint:
        'check free space, the file system (read-only after an SD-card fault?) and the permissions of the ' +
        'store.path directory',
      cause: err,
    },
  );
}

/**
 * Opens (creating when needed) and verifies the ledger. A damaged file is moved aside and replaced;
 * storage that refuses writes throws LEDGER_WRITE_FAILED so the caller can refuse sessions and retry.
 */
export function openDatabase(path: string, logger: Logger, nowMs: number): OpenedDatabase {
  try {
    prepareLedgerFiles(path);
    return { db: connect(path, logger), alarm: null };
  } catch (err) {
    if (!(err instanceof DamagedFile)) {
      if (isStorageFailure(err)) throw storageError(path, err);
      throw err;
    }
    const reason = err.message;
    let movedTo: string;
    try {
      movedTo = moveAside(path, nowMs, err.db);
    } catch (moveErr) {
      throw storageError(path, moveErr);
    }
    const alarm: CorruptionAlarm = { path, movedTo, reason, atMs: nowMs };
    logger.error(
      { code: ErrorCodes.LEDGER_CORRUPT, path, movedTo, reason },
      'ledger file was damaged: moved aside and replaced by an empty ledger; reconcile its unsettled sales by hand',
    );
    try {
      // The damaged file was moved aside and the alarm raised: the replacement gets a new identity.
      acknowledgeLoss(path, nowMs);
      prepareLedgerFiles(path);
      return { db: connect(path, logger), alarm };
    } catch (again) {
      throw isStorageFailure(again) ? storageError(path, again) : again;
    }
  }
}
