/**
 * The ledger's identity marker (docs/decisions/hardening.md item 11, docs/decisions/power-cuts.md) and the modes of its
 * files (item 8).
 *
 * SQLite happily treats a zero-byte or missing file as a new, empty database, so a ledger that
 * was truncated or deleted would silently become a fresh one and every unsettled sale in it would
 * be forgotten. To notice, each ledger carries a random identity in its header
 * (`PRAGMA application_id`, no schema change) and the same identity in a small file beside it,
 * `<store.path>.identity`. The ledger is the authority, the marker its witness. At open:
 *   - no marker: first start (or an older ledger): the identity is written to both;
 *   - marker (readable or torn), but the ledger is missing or empty: the ledger was lost. The
 *     marker is written only after the ledger's identity was committed (fsynced), so any marker
 *     at all says a ledger with content existed here;
 *   - a readable marker with another identity than the ledger's: another file took its place;
 *   - a torn marker (empty, half-written, unreadable: a power cut while an older version wrote it
 *     without fsync) beside a ledger that passed integrity_check and carries an identity: the
 *     marker is rewritten from the ledger and the start goes on (`ledger.marker.repaired`). Beside
 *     a ledger with no identity (a new or foreign file) it stays lost: there is nothing to witness.
 * Lost raises LEDGER_CORRUPT and sessions are refused (the daemon retries) until a technician
 * runs `qrvend ledger acknowledge-loss`, which moves the marker aside.
 *
 * The marker is written with writeFileAtomic (tmp, fsync, rename, fsync of the directory), so a
 * power cut leaves no marker or a whole one, never a torn one.
 *
 * Files: the directory is created 0750 and the ledger (hence its -wal/-shm, which SQLite creates
 * with the ledger's mode) 0600 whatever the process umask, so a daemon started outside systemd
 * does not leave the payment record readable by every local user.
 */
import DatabaseCtor from 'better-sqlite3';
import type Database from 'better-sqlite3';
import { randomInt } from 'node:crypto';
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsyncDir, renameDurably, writeFileAtomic } from '../core/durable-file.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';

export const LEDGER_DIR_MODE = 0o750;
export const LEDGER_FILE_MODE = 0o600;

export const ACKNOWLEDGE_COMMAND = 'qrvend ledger acknowledge-loss';

/** A whole marker is `qrvend-ledger <id>\n`, about 25 bytes; anything larger is not one. */
const MARKER_MAX_BYTES = 64;
/** The trailing newline is required: a marker cut short after some digits must not read as another identity. */
const MARKER_FORMAT = /^qrvend-ledger ([1-9]\d{0,9})\n$/;

export function markerPathOf(ledgerPath: string): string {
  return `${ledgerPath}.identity`;
}

/** What lies beside the ledger: no marker, a readable one, or a torn one (and why it is not readable). */
export type Marker = { kind: 'none' } | { kind: 'id'; id: number } | { kind: 'torn'; why: string };

export function readMarker(ledgerPath: string): Marker {
  const file = markerPathOf(ledgerPath);
  if (!existsSync(file)) return { kind: 'none' };
  let text: string;
  try {
    const st = statSync(file);
    if (!st.isFile()) return { kind: 'torn', why: 'it is not a regular file' };
    if (st.size === 0) return { kind: 'torn', why: 'it is empty' };
    if (st.size > MARKER_MAX_BYTES) return { kind: 'torn', why: `it is ${st.size} bytes, more than a marker` };
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(MARKER_MAX_BYTES);
      text = buf.subarray(0, readSync(fd, buf, 0, MARKER_MAX_BYTES, 0)).toString('latin1');
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    return {
      kind: 'torn',
      why: `it cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    };
  }
  const id = MARKER_FORMAT.exec(text)?.[1];
  if (id === undefined || Number(id) > 2 ** 31 - 1)
    return { kind: 'torn', why: 'it is not a whole marker (half-written?)' };
  return { kind: 'id', id: Number(id) };
}

function writeMarker(ledgerPath: string, id: number): void {
  const file = markerPathOf(ledgerPath);
  writeFileAtomic(file, `qrvend-ledger ${id}\n`, LEDGER_FILE_MODE);
  // The mode argument passes through the umask; said again so the marker is 0600 whatever it is.
  chmodSync(file, LEDGER_FILE_MODE);
}

function lostError(ledgerPath: string, why: string): QrvendError {
  return new QrvendError(ErrorCodes.LEDGER_CORRUPT, `ledger ${ledgerPath} was lost: ${why}; new sessions are refused`, {
    hint:
      `restore the ledger from a backup if there is one; otherwise reconcile the sales of the lost ledger with ` +
      `the provider by hand and run \`${ACKNOWLEDGE_COMMAND}\` to start a new ledger`,
    details: { path: ledgerPath, lost: true, marker: markerPathOf(ledgerPath) },
  });
}

/** Why a ledger file that is missing or empty beside a marker (of any kind) is lost. */
function missingOrEmpty(marker: Marker, size: number | null): string {
  const what = marker.kind === 'torn' ? `an identity marker (torn: ${marker.why})` : 'its identity marker';
  return size === null
    ? `the file is missing but ${what} is there`
    : `the file is empty (truncated) but ${what} is there`;
}

/** True for the error `prepareLedgerFiles`/`adoptIdentity` raise for a lost ledger. */
export function isLedgerLost(err: unknown): err is QrvendError {
  return err instanceof QrvendError && err.code === ErrorCodes.LEDGER_CORRUPT && err.details?.lost === true;
}

/**
 * The verdict on a ledger file that is missing or empty (`size` null or 0) beside `marker`, before
 * SQLite touches it: the reason it is lost, or null when it may be opened (or created).
 */
export function lostBeforeOpen(marker: Marker, size: number | null): string | null {
  return marker.kind !== 'none' && (size === null || size === 0) ? missingOrEmpty(marker, size) : null;
}

/** What to do with an opened ledger (integrity_check passed) carrying identity `id` (0: none) beside `marker`. */
export type IdentityVerdict =
  { kind: 'first-start' } | { kind: 'witnessed' } | { kind: 'repair'; why: string } | { kind: 'lost'; why: string };

export function judgeIdentity(marker: Marker, id: number): IdentityVerdict {
  switch (marker.kind) {
    case 'none':
      return { kind: 'first-start' };
    case 'id':
      if (marker.id === id) return { kind: 'witnessed' };
      return {
        kind: 'lost',
        why:
          id === 0
            ? 'the file carries no identity (a new or foreign database) but a marker is there'
            : `the file carries identity ${id}, the marker ${marker.id}: another file took its place`,
      };
    case 'torn':
      // A torn marker says a ledger existed here; a file without an identity qrvend gives (1..2^31-1) is not it.
      if (id <= 0)
        return {
          kind: 'lost',
          why:
            `the file carries no identity (a new or foreign database) but an identity marker is there (torn: ` +
            `${marker.why})`,
        };
      return { kind: 'repair', why: marker.why };
  }
}

/**
 * Before SQLite touches the path: creates the directory (0750) and an empty ledger file (0600)
 * when there is none, unless a marker says a ledger existed here (then it throws: lost).
 */
export function prepareLedgerFiles(ledgerPath: string): void {
  const dir = dirname(ledgerPath);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: LEDGER_DIR_MODE });
    chmodSync(dir, LEDGER_DIR_MODE);
    fsyncDir(dirname(dir));
  }
  const size = existsSync(ledgerPath) ? statSync(ledgerPath).size : null;
  const lost = lostBeforeOpen(readMarker(ledgerPath), size);
  if (lost !== null) throw lostError(ledgerPath, lost);
  // The new file's directory entry is made durable with the marker's (same directory, writeMarker).
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

/** A torn marker rewritten from the ledger at open (logged at warn by the caller). */
export interface MarkerRepair {
  id: number;
  why: string;
}

/**
 * After the ledger opened and passed integrity_check: checks its identity against the marker, or
 * gives it one; a torn marker is rewritten from the ledger (returned so the caller logs it).
 * The marker is written after the identity is committed, so a marker never witnesses an identity
 * the ledger could lose.
 */
export function adoptIdentity(db: Database.Database, ledgerPath: string): MarkerRepair | null {
  const marker = readMarker(ledgerPath);
  let id = db.pragma('application_id', { simple: true }) as number;
  const verdict = judgeIdentity(marker, id);
  switch (verdict.kind) {
    case 'lost':
      throw lostError(ledgerPath, verdict.why);
    case 'witnessed':
      return null;
    case 'repair':
      writeMarker(ledgerPath, id);
      return { id, why: verdict.why };
    case 'first-start':
      if (id === 0) {
        id = randomInt(1, 2 ** 31 - 1);
        db.pragma(`application_id = ${id}`); // committed (WAL, synchronous=FULL) before the marker is written
      }
      writeMarker(ledgerPath, id);
      return null;
  }
}

/**
 * The technician's acknowledgement: the marker is moved aside (kept, with a time stamp, as a
 * record that a ledger was lost), so the next open starts a new ledger. Returns where it went,
 * or null when there was nothing to acknowledge. The move is durable: a power cut right after
 * must not bring the loss back, nor lose the record.
 */
export function acknowledgeLoss(ledgerPath: string, nowMs: number): string | null {
  const marker = markerPathOf(ledgerPath);
  if (!existsSync(marker)) return null;
  const movedTo = `${marker}.lost-${new Date(nowMs).toISOString().replace(/[:.]/g, '-')}`;
  renameDurably(marker, movedTo);
  return movedTo;
}

/** The ledger's application_id read without writing (0: none), or null when it is not readable as a database. */
function identityOfFile(ledgerPath: string): number | null {
  let db: Database.Database | null = null;
  try {
    db = new DatabaseCtor(ledgerPath, { readonly: true, fileMustExist: true });
    return db.pragma('application_id', { simple: true }) as number;
  } catch {
    return null; // not readable as a database: the damaged-file path (moved aside at open) handles it
  } finally {
    db?.close();
  }
}

/**
 * Whether the ledger at `ledgerPath` is in the lost state (for doctor and the acknowledge
 * command): the same verdict the daemon reaches at open. A torn marker beside a ledger with an
 * identity is not lost (the daemon rewrites it at its next start: `tornMarkerOf`).
 */
export function ledgerLossOf(ledgerPath: string): string | null {
  const marker = readMarker(ledgerPath);
  if (marker.kind === 'none') return null;
  const size = existsSync(ledgerPath) ? statSync(ledgerPath).size : null;
  const before = lostBeforeOpen(marker, size);
  if (before !== null) return `the ledger ${before.replace(/^the file/, 'file')}`;
  const id = identityOfFile(ledgerPath);
  if (id === null) return null;
  const verdict = judgeIdentity(marker, id);
  return verdict.kind === 'lost' ? `the ledger ${verdict.why.replace(/^the file/, 'file')}` : null;
}

/** Why the marker is torn, when it is (null when there is none or it is whole). */
export function tornMarkerOf(ledgerPath: string): string | null {
  const marker = readMarker(ledgerPath);
  return marker.kind === 'torn' ? marker.why : null;
}
