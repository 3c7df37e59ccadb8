/**
 * The ledger's identity marker (issue 20 item 11) and the modes of its files (item 8).
 *
 * SQLite happily treats a zero-byte or missing file as a new, empty database, so a ledger that
 * was truncated or deleted would silently become a fresh one and every unsettled sale in it would
 * be forgotten. To notice, each ledger carries a random identity in its header
 * (`PRAGMA application_id`, no schema change) and the same identity in a small file beside it,
 * `<store.path>.identity`. At open:
 *   - no marker: first start (or an older ledger): the identity is written to both;
 *   - marker, but the ledger is missing, empty or carries another identity: the ledger was lost.
 *     LEDGER_CORRUPT is raised and sessions are refused (the daemon retries) until a technician
 *     runs `qrvend ledger acknowledge-loss`, which moves the marker aside.
 *
 * Files: the directory is created 0750 and the ledger (hence its -wal/-shm, which SQLite creates
 * with the ledger's mode) 0600 whatever the process umask, so a daemon started outside systemd
 * does not leave the payment record readable by every local user.
 */
import DatabaseCtor from 'better-sqlite3';
import type Database from 'better-sqlite3';
import { randomInt } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ErrorCodes, QrvendError } from '../core/errors.js';

export const LEDGER_DIR_MODE = 0o750;
export const LEDGER_FILE_MODE = 0o600;

export const ACKNOWLEDGE_COMMAND = 'qrvend ledger acknowledge-loss';

export function markerPathOf(ledgerPath: string): string {
  return `${ledgerPath}.identity`;
}

/** The identity recorded beside the ledger, or null when there is no marker. */
export function readMarker(ledgerPath: string): number | null {
  const file = markerPathOf(ledgerPath);
  if (!existsSync(file)) return null;
  const parsed = /^qrvend-ledger (\d{1,10})\s*$/.exec(readFileSync(file, 'utf8'));
  // An unreadable marker is itself a sign of trouble: treat it as an identity no ledger has.
  return parsed?.[1] === undefined ? -1 : Number(parsed[1]);
}

function writeMarker(ledgerPath: string, id: number): void {
  writeFileSync(markerPathOf(ledgerPath), `qrvend-ledger ${id}\n`, { mode: LEDGER_FILE_MODE });
  chmodSync(markerPathOf(ledgerPath), LEDGER_FILE_MODE);
}

function lostError(ledgerPath: string, why: string): QrvendError {
  return new QrvendError(ErrorCodes.LEDGER_CORRUPT, `ledger ${ledgerPath} was lost: ${why}; new sessions are refused`, {
    hint: `restore the ledger from a backup if there is one; otherwise reconcile the sales of the lost ledger with the provider by hand and run \`${ACKNOWLEDGE_COMMAND}\` to start a new ledger`,
    details: { path: ledgerPath, lost: true, marker: markerPathOf(ledgerPath) },
  });
}

/** True for the error `checkBeforeOpen`/`adoptIdentity` raise for a lost ledger. */
export function isLedgerLost(err: unknown): err is QrvendError {
  return err instanceof QrvendError && err.code === ErrorCodes.LEDGER_CORRUPT && err.details?.lost === true;
}

/**
 * Before SQLite touches the path: creates the directory (0750) and an empty ledger file (0600)
 * when there is none, unless the marker says a ledger existed here (then it throws: lost).
 */
export function prepareLedgerFiles(ledgerPath: string): void {
  const dir = dirname(ledgerPath);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: LEDGER_DIR_MODE });
    chmodSync(dir, LEDGER_DIR_MODE);
  }
  const marker = readMarker(ledgerPath);
  const size = existsSync(ledgerPath) ? statSync(ledgerPath).size : null;
  if (marker !== null && (size === null || size === 0)) {
    throw lostError(ledgerPath, size === null ? 'the file is missing but its identity marker is there' : 'the file is empty (truncated) but its identity marker is there');
  }
  if (size === null) closeSync(openSync(ledgerPath, 'a', LEDGER_FILE_MODE));
  // Tighten a file an older version (or a umask) created too open; -wal/-shm follow the ledger's mode.
  for (const suffix of ['', '-wal', '-shm']) {
    const file = ledgerPath + suffix;
    if (!existsSync(file)) continue;
    const st = statSync(file);
    // Regular files only: anything else at the path is for SQLite to refuse (LEDGER_WRITE_FAILED).
    if (st.isFile() && (st.mode & 0o077) !== 0) chmodSync(file, LEDGER_FILE_MODE);
  }
}

/** After the ledger opened: checks its identity against the marker, or gives it one. */
export function adoptIdentity(db: Database.Database, ledgerPath: string): void {
  const marker = readMarker(ledgerPath);
  let id = db.pragma('application_id', { simple: true }) as number;
  if (marker !== null && marker !== id) {
    throw lostError(ledgerPath, id === 0 ? 'the file carries no identity (a new or foreign database) but a marker is there' : `the file carries identity ${id}, the marker ${marker}`);
  }
  if (id === 0) {
    id = randomInt(1, 2 ** 31 - 1);
    db.pragma(`application_id = ${id}`);
  }
  if (marker === null) writeMarker(ledgerPath, id);
}

/**
 * The technician's acknowledgement: the marker is moved aside (kept, with a time stamp, as a
 * record that a ledger was lost), so the next open starts a new ledger. Returns where it went,
 * or null when there was nothing to acknowledge.
 */
export function acknowledgeLoss(ledgerPath: string, nowMs: number): string | null {
  const marker = markerPathOf(ledgerPath);
  if (!existsSync(marker)) return null;
  const movedTo = `${marker}.lost-${new Date(nowMs).toISOString().replace(/[:.]/g, '-')}`;
  renameSync(marker, movedTo);
  return movedTo;
}

/** Whether the ledger at `ledgerPath` is in the lost state (for doctor and the acknowledge command). */
export function ledgerLossOf(ledgerPath: string): string | null {
  const marker = readMarker(ledgerPath);
  if (marker === null) return null;
  const size = existsSync(ledgerPath) ? statSync(ledgerPath).size : null;
  if (size === null) return 'the ledger file is missing but its identity marker is there';
  if (size === 0) return 'the ledger file is empty (truncated) but its identity marker is there';
  let id: number | null = null;
  let db: Database.Database | null = null;
  try {
    db = new DatabaseCtor(ledgerPath, { readonly: true, fileMustExist: true });
    id = db.pragma('application_id', { simple: true }) as number;
  } catch {
    id = null; // not readable as a database: the damaged-file path (moved aside at open) handles it
  } finally {
    db?.close();
  }
  return id !== null && id !== marker ? `the ledger file carries identity ${id}, its marker ${marker}: another file took its place` : null;
}
