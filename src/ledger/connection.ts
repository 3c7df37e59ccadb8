/**
 * The ledger's one connection, and whether the disk takes writes.
 *
 * A failed write or sync (SQLITE_IOERR*, SQLITE_FULL, SQLITE_READONLY...) leaves SQLite unsure of
 * what reached the disk, so the connection is closed, reopened and re-verified, never reused as
 * is. Until a write succeeds again the ledger reports itself unwritable, so the payment side can
 * tell the machine loop to refuse new sessions (records are never silently dropped); a probe write
 * on a timer notices when the disk is back, even if nobody else writes meanwhile.
 */
import Database from 'better-sqlite3';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { readMarker } from './identity.js';
import { applyDurabilityPragmas, closeQuietly } from './db.js';
import { describeError, isCorruption, isStorageFailure } from './sqlite-errors.js';

export type WritabilityListener = (writable: boolean, reason: string | null) => void;

/** Timers, injectable so tests decide when a probe runs. */
export interface LedgerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: LedgerTimers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface ConnectionOptions {
  path: string;
  logger: Logger;
  now: () => number;
  timers: LedgerTimers;
  /** How often an unwritable ledger tries a probe write. */
  probeIntervalMs: number;
}

export class LedgerConnection {
  private db: Database.Database | null;
  private readonly statements = new Map<string, Database.Statement>();
  private isWritable = true;
  private reason: string | null = null;
  private readonly listeners = new Set<WritabilityListener>();
  private probeHandle: unknown = null;
  private closed = false;

  constructor(
    db: Database.Database,
    private readonly options: ConnectionOptions,
  ) {
    this.db = db;
  }

  get writable(): boolean {
    return this.isWritable;
  }

  /** Why the ledger is unwritable (null while writable). */
  get unwritableReason(): string | null {
    return this.reason;
  }

  /** Called on every change of writability; returns the unsubscribe function. */
  onWritability(listener: WritabilityListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A prepared statement on the current connection (re-prepared after a reopen). */
  statement(sql: string): Database.Statement {
    const db = this.open();
    let stmt = this.statements.get(sql);
    if (stmt === undefined) {
      stmt = db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /** Runs `fn` as one IMMEDIATE SQLite transaction: all of it is durable, or none of it. */
  write<T>(fn: () => T): T {
    const db = this.open();
    try {
      const result = db.transaction(fn).immediate();
      if (!this.isWritable) this.setWritable(true, null);
      return result;
    } catch (err) {
      throw this.handleFailure(err, 'write');
    }
  }

  /**
   * Like write(), but the commit is not synced to the disk on its own (synchronous=NORMAL for this
   * one transaction): it becomes durable with the next synced commit or checkpoint. Only for a
   * change that precedes no effect outside the process, so that losing it to a power cut merely
   * repeats work that is safe to repeat (SD-card wear, docs/decisions/benchmarks.md). A kill -9 loses nothing: the
   * commit is in the WAL in the page cache.
   */
  writeUnsynced<T>(fn: () => T): T {
    const db = this.open();
    // Inside a larger write it is part of that commit, synced with it.
    if (db.inTransaction) return this.write(fn);
    db.pragma('synchronous = NORMAL');
    try {
      return this.write(fn);
    } finally {
      // A failed write may have closed this handle; a reopened one starts at FULL (db.ts).
      if (db.open) db.pragma('synchronous = FULL');
    }
  }

  /** Runs `fn` (reads only) on the current connection. */
  read<T>(fn: () => T): T {
    this.open();
    try {
      return fn();
    } catch (err) {
      throw this.handleFailure(err, 'read');
    }
  }

  /** One small write to learn whether the disk takes writes again. */
  probe(): boolean {
    try {
      this.write(() => {
        this.statement(
          `INSERT INTO meta (key, value) VALUES ('last_probe_ms', ?) ON CONFLICT (key) DO UPDATE SET value = ` +
            `excluded.value`,
        ).run(String(this.options.now()));
      });
      return true;
    } catch {
      return false;
    }
  }

  close(): void {
    this.closed = true;
    this.cancelProbe();
    this.dropConnection();
  }

  private open(): Database.Database {
    if (this.closed) throw new QrvendError(ErrorCodes.INTERNAL, 'the ledger was closed');
    if (this.db !== null) return this.db;
    try {
      this.db = this.reconnect();
      return this.db;
    } catch (err) {
      throw this.handleFailure(err, 'reopen');
    }
  }

  /** Reopen and re-verify: the pragmas again (they are per connection) and a quick_check. */
  private reconnect(): Database.Database {
    const db = new Database(this.options.path, { fileMustExist: true });
    try {
      const rows = db.pragma('quick_check') as Array<{ quick_check: string }>;
      const verdict = rows.map((r) => r.quick_check).join('; ');
      if (verdict !== 'ok') {
        const err = new Error(`quick_check: ${verdict}`) as Error & { code: string };
        err.code = 'SQLITE_CORRUPT';
        throw err;
      }
      // A file swapped or truncated under the running daemon is not the ledger it was (identity.ts).
      // Only a readable marker witnesses: one torn under the running daemon is rewritten at the next start.
      const marker = readMarker(this.options.path);
      const id = db.pragma('application_id', { simple: true }) as number;
      if (marker.kind === 'id' && id !== marker.id) {
        const err = new Error(
          `ledger identity ${id} is not the marker's ${marker.id}: the file was replaced or truncated`,
        ) as Error & { code: string };
        err.code = 'SQLITE_CORRUPT';
        throw err;
      }
      applyDurabilityPragmas(db);
      return db;
    } catch (err) {
      closeQuietly(db);
      throw err;
    }
  }

  private handleFailure(err: unknown, during: 'write' | 'read' | 'reopen'): unknown {
    if (err instanceof QrvendError) return err;
    if (!isStorageFailure(err) && !isCorruption(err)) return err;
    const reason = describeError(err);
    this.dropConnection();
    if (isCorruption(err)) {
      // Never moved aside while running (the flows hold references into it); a restart does that.
      this.options.logger.error(
        { code: ErrorCodes.LEDGER_CORRUPT, path: this.options.path, reason },
        'ledger file damaged while running; restart qrvend to move it aside',
      );
    }
    this.options.logger.error(
      { code: ErrorCodes.LEDGER_WRITE_FAILED, path: this.options.path, during, reason },
      'ledger storage failed: connection closed, new sessions refused until a write succeeds',
    );
    this.setWritable(false, reason);
    this.scheduleProbe();
    return new QrvendError(ErrorCodes.LEDGER_WRITE_FAILED, `ledger ${during} failed: ${reason}`, {
      hint:
        'check free space and the storage device (dmesg); qrvend refuses new sessions until the ledger can write ' +
        'again',
      cause: err,
    });
  }

  private dropConnection(): void {
    this.statements.clear();
    closeQuietly(this.db);
    this.db = null;
  }

  private setWritable(writable: boolean, reason: string | null): void {
    const changed = writable !== this.isWritable;
    this.isWritable = writable;
    this.reason = reason;
    if (writable) this.cancelProbe();
    if (!changed) return;
    if (writable)
      this.options.logger.warn(
        { code: ErrorCodes.LEDGER_WRITE_FAILED, path: this.options.path },
        'ledger writes succeed again',
      );
    for (const listener of [...this.listeners]) {
      try {
        listener(writable, reason);
      } catch (err) {
        this.options.logger.error({ err: describeError(err) }, 'a ledger writability listener threw');
      }
    }
  }

  private scheduleProbe(): void {
    if (this.probeHandle !== null || this.closed) return;
    this.probeHandle = this.options.timers.setTimeout(() => {
      this.probeHandle = null;
      if (!this.probe()) this.scheduleProbe();
    }, this.options.probeIntervalMs);
  }

  private cancelProbe(): void {
    if (this.probeHandle !== null) this.options.timers.clearTimeout(this.probeHandle);
    this.probeHandle = null;
  }
}
