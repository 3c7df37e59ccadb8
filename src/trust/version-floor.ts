/**
 * The highest version of a signed document this installation has verified, kept on disk
 * (docs/security.md, "Versions kept across restarts"). A signed document stays valid for its whole
 * window, so a file put back from a backup, or by anyone who can write it, verifies as well as the
 * day it was signed: only a record of what was already believed tells it is older. The record is
 * written durably (core/durable-file.ts) before the document is used, and an older document is
 * refused as long as the record says so, across restarts and power cuts.
 *
 * One record per named document (`registry`, `revocations`, `catalog`...), in its own small file
 * `<dir>/<name>.version.json` (mode 0600), so documents never share a write. A version is a whole
 * number that grows with each new signing: the signature's issue time, or a counter the signer
 * keeps. Stepping back on purpose is the operator's act (`stepBack`, behind a documented command),
 * never the document's: the record keeps the version it stepped back from.
 *
 * A record that cannot be read is not "no record": the caller refuses (fail closed) and the
 * operator's step back writes a good one.
 */
import { chownSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../core/durable-file.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';

/** `registry`, `machine-registry`, `revocations.ops`: a file name of its own, nothing more. */
export const DOCUMENT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const MAX_RECORD_BYTES = 4096;

export interface FloorRecord {
  format: 1;
  document: string;
  /** The highest version verified (or the one stepped back to). */
  version: number;
  /** A digest of that version's content, when the caller gives one: another content under that version is refused. */
  digest?: string;
  recordedAt: string;
  /** Present after an operator's step back: the version the record held before it. */
  steppedBackFrom?: number;
}

export interface VersionFloorOptions {
  /** The directory the record lives in (created 0700 when missing). */
  dir: string;
  /** The document's name (DOCUMENT_NAME). */
  document: string;
  /** How a version reads in a message (an issue time as a date, a counter as itself). */
  describe?: (version: number) => string;
  /** The command that steps back on purpose, named in the refusal (docs say where). */
  stepBackHint?: string;
}

/** Reads, checks and records the highest verified version of one named document. */
export class VersionFloor {
  readonly file: string;
  readonly document: string;
  private readonly describe: (version: number) => string;
  private readonly stepBackHint: string;

  constructor(private readonly options: VersionFloorOptions) {
    if (!DOCUMENT_NAME.test(options.document))
      throw new TypeError(`version floor: ${JSON.stringify(options.document)} is not a document name`);
    this.document = options.document;
    this.file = join(options.dir, `${options.document}.version.json`);
    this.describe = options.describe ?? ((v) => `version ${v}`);
    this.stepBackHint = options.stepBackHint ?? `step back on purpose only by writing a lower floor (docs/security.md)`;
  }

  /** The record on disk, or null when none was ever written. A damaged one throws VERSION_FLOOR_FAILED. */
  read(): FloorRecord | null {
    if (!existsSync(this.file)) return null;
    let value: unknown;
    try {
      if (statSync(this.file).size > MAX_RECORD_BYTES) throw new Error(`larger than ${MAX_RECORD_BYTES} bytes`);
      value = JSON.parse(readFileSync(this.file, 'utf8'));
    } catch (err) {
      throw this.failed(`cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const record = value as Partial<FloorRecord> | null;
    if (
      record === null ||
      typeof record !== 'object' ||
      record.format !== 1 ||
      record.document !== this.document ||
      !isVersion(record.version) ||
      (record.digest !== undefined && typeof record.digest !== 'string')
    )
      throw this.failed(`is not a version record of ${this.document}`);
    return record as FloorRecord;
  }

  /**
   * Refuses `version` (VERSION_ROLLBACK, naming both versions) when it is older than the record,
   * or when it is the recorded version with another digest. Reads the record from disk each time,
   * so an operator's step back counts at once.
   */
  check(version: number, digest?: string): void {
    if (!isVersion(version)) throw new TypeError(`version floor: ${String(version)} is not a version`);
    const record = this.read();
    if (record === null) return;
    const held = this.describe(record.version);
    if (version < record.version) {
      throw new QrvendError(
        ErrorCodes.VERSION_ROLLBACK,
        `the ${this.document} offered is ${this.describe(version)}, older than ${held}, the newest verified here ` +
          `(${this.file}): refused, so a file put back cannot undo a newer one`,
        {
          hint: `sign a new ${this.document}; to go back to this one on purpose: ${this.stepBackHint}`,
          details: { document: this.document, offered: version, floor: record.version, file: this.file },
        },
      );
    }
    if (version === record.version && digest !== undefined && record.digest !== undefined && digest !== record.digest) {
      throw new QrvendError(
        ErrorCodes.VERSION_ROLLBACK,
        `the ${this.document} offered is ${held} but not the one verified here under that version (${this.file}): ` +
          'refused',
        {
          hint: `sign a new ${this.document}; to take this one on purpose: ${this.stepBackHint}`,
          details: { document: this.document, offered: version, floor: record.version, file: this.file },
        },
      );
    }
  }

  /**
   * Records `version` (durably, before the caller uses the document) when it is higher than the
   * record, or the same version's digest where none was kept. Never lowers the record.
   */
  record(version: number, digest?: string, nowMs = Date.now()): void {
    if (!isVersion(version)) throw new TypeError(`version floor: ${String(version)} is not a version`);
    const record = this.read();
    if (record !== null && version < record.version) return;
    if (record !== null && version === record.version && (digest === undefined || record.digest !== undefined)) return;
    this.write({ version, ...(digest === undefined ? {} : { digest }) }, nowMs);
  }

  /** check() then record(): what a reader of a newly verified document calls before using it. */
  admit(version: number, digest?: string, nowMs = Date.now()): void {
    this.check(version, digest);
    this.record(version, digest, nowMs);
  }

  /**
   * The operator's step back on purpose: the record becomes `version` (lower or not), keeping the
   * version it held in `steppedBackFrom`. Also writes a good record over a damaged one.
   */
  stepBack(version: number, digest?: string, nowMs = Date.now()): { from: number | null; to: number } {
    if (!isVersion(version)) throw new TypeError(`version floor: ${String(version)} is not a version`);
    let from: number | null = null;
    try {
      from = this.read()?.version ?? null;
    } catch {
      from = null; // a damaged record is what a step back repairs
    }
    this.write(
      { version, ...(digest === undefined ? {} : { digest }), ...(from === null ? {} : { steppedBackFrom: from }) },
      nowMs,
    );
    return { from, to: version };
  }

  private write(fields: Pick<FloorRecord, 'version' | 'digest' | 'steppedBackFrom'>, nowMs: number): void {
    const record: FloorRecord = {
      format: 1,
      document: this.document,
      ...fields,
      recordedAt: new Date(nowMs).toISOString(),
    };
    try {
      mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
      writeFileAtomic(this.file, `${JSON.stringify(record)}\n`, 0o600);
      // Written by root (an operator's step back run without sudo -u), the record stays the
      // directory owner's: the service that reads it must not be locked out of its own record.
      const dir = statSync(this.options.dir);
      if (process.getuid?.() === 0 && (dir.uid !== 0 || dir.gid !== 0)) chownSync(this.file, dir.uid, dir.gid);
    } catch (err) {
      throw this.failed(`cannot be written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }

  private failed(what: string): QrvendError {
    return new QrvendError(
      ErrorCodes.VERSION_FLOOR_FAILED,
      `the record of the newest ${this.document} verified here, ${this.file}, ${what}: nothing older can be told ` +
        'from newer, so none is taken',
      {
        hint: `check the directory's owner and free space; to write a good record: ${this.stepBackHint}`,
        details: { document: this.document, file: this.file },
      },
    );
  }
}

function isVersion(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}
