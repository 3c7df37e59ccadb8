/**
 * The one error type of qrvend. Every failure a technician or an integrator can see carries a
 * stable code (greppable in logs, documented in docs/codes.md) and a message that says what to do.
 *
 * Codes are grouped by layer: CONFIG_*, SERIAL_*, MDB_*, GATEWAY_*, LEDGER_*, START_*, DISPLAY_*,
 * DEVICE_*, DEX_*, CLI_*. Add codes here, never inline strings elsewhere, so the list stays the reference.
 */
export const ErrorCodes = {
  CONFIG_INVALID: 'CONFIG_INVALID',
  CONFIG_UNREADABLE: 'CONFIG_UNREADABLE',
  /** Not an error: a warning that the configuration file is writable by every local user. */
  CONFIG_EXPOSED: 'CONFIG_EXPOSED',
  SECRET_UNREADABLE: 'SECRET_UNREADABLE',
  /** The fleet's configuration overlay was damaged or invalid: ignored, set aside, site + defaults used. */
  CONFIG_OVERLAY_REJECTED: 'CONFIG_OVERLAY_REJECTED',

  SERIAL_OPEN_FAILED: 'SERIAL_OPEN_FAILED',
  SERIAL_WRITE_FAILED: 'SERIAL_WRITE_FAILED',
  SERIAL_LINK_LOST: 'SERIAL_LINK_LOST',
  MDB_COMMAND_REFUSED: 'MDB_COMMAND_REFUSED',
  MDB_OUT_OF_SEQUENCE: 'MDB_OUT_OF_SEQUENCE',

  GATEWAY_TIMEOUT: 'GATEWAY_TIMEOUT',
  GATEWAY_UNREACHABLE: 'GATEWAY_UNREACHABLE',
  GATEWAY_BAD_RESPONSE: 'GATEWAY_BAD_RESPONSE',
  GATEWAY_HTTP_STATUS: 'GATEWAY_HTTP_STATUS',
  PROTOCOL_INVALID: 'PROTOCOL_INVALID',

  LEDGER_CORRUPT: 'LEDGER_CORRUPT',
  LEDGER_WRITE_FAILED: 'LEDGER_WRITE_FAILED',
  LEDGER_NOT_FOUND: 'LEDGER_NOT_FOUND',
  OUTBOX_NOT_FOUND: 'OUTBOX_NOT_FOUND',
  OUTBOX_DEAD_LETTER: 'OUTBOX_DEAD_LETTER',
  LEDGER_INVALID_TRANSITION: 'LEDGER_INVALID_TRANSITION',
  LEDGER_SCHEMA_UNSUPPORTED: 'LEDGER_SCHEMA_UNSUPPORTED',
  /** The vend journal beside the ledger cannot be written (docs/operations.md, "The vend journal"): sales go on. */
  LEDGER_JOURNAL_FAILED: 'LEDGER_JOURNAL_FAILED',

  /** Not an error: the wall clock stepped (NTP, a person); durations continue on the monotonic clock. */
  CLOCK_STEP: 'CLOCK_STEP',

  /** Operator side of the fleet link (`qrvend fleet`): the broker cannot be reached, refused us, or no reply came. */
  FLEET_BROKER_UNREACHABLE: 'FLEET_BROKER_UNREACHABLE',
  FLEET_BROKER_REFUSED: 'FLEET_BROKER_REFUSED',
  FLEET_NO_REPLY: 'FLEET_NO_REPLY',
  /** `qrvend fleet update`: its rollout file cannot be read or written, or is not a rollout this version reads. */
  FLEET_ROLLOUT_FILE: 'FLEET_ROLLOUT_FILE',

  /**
   * A remote update (docs/decisions/remote-updates.md) refused: the manifest, its signature, version, architecture or
   * artifact.
   */
  UPDATE_MANIFEST_INVALID: 'UPDATE_MANIFEST_INVALID',
  UPDATE_SIGNATURE_REFUSED: 'UPDATE_SIGNATURE_REFUSED',
  UPDATE_DOWNGRADE: 'UPDATE_DOWNGRADE',
  UPDATE_WRONG_ARCH: 'UPDATE_WRONG_ARCH',
  UPDATE_TOO_OLD: 'UPDATE_TOO_OLD',
  UPDATE_ARTIFACT_MISMATCH: 'UPDATE_ARTIFACT_MISMATCH',
  UPDATE_DOWNLOAD_FAILED: 'UPDATE_DOWNLOAD_FAILED',
  UPDATE_DATA_CAP: 'UPDATE_DATA_CAP',

  START_REJECTED: 'START_REJECTED',
  START_LISTEN_FAILED: 'START_LISTEN_FAILED',

  DISPLAY_UNAVAILABLE: 'DISPLAY_UNAVAILABLE',
  DISPLAY_QR_TOO_LONG: 'DISPLAY_QR_TOO_LONG',
  DEVICE_UNAVAILABLE: 'DEVICE_UNAVAILABLE',

  /**
   * The DEX link to the VMC's audit jack (src/dex/link, docs/dex.md): the VMC never answered the
   * handshake, stopped answering mid-read, kept sending blocks with bad CRCs, a read was asked
   * while one runs, the port cannot be opened or is held by another process, the file outgrew
   * dex.maxFileBytes.
   */
  DEX_NO_ANSWER: 'DEX_NO_ANSWER',
  DEX_TIMEOUT: 'DEX_TIMEOUT',
  DEX_CRC: 'DEX_CRC',
  DEX_BUSY: 'DEX_BUSY',
  DEX_PORT: 'DEX_PORT',
  DEX_TOO_LARGE: 'DEX_TOO_LARGE',
  /** `qrvend dex parse`: the audit file cannot be opened or read, or is not a regular file. */
  DEX_FILE_UNREADABLE: 'DEX_FILE_UNREADABLE',
  /** `qrvend dex parse`: the file was read but failed its check (not an audit, altered, cut short). */
  DEX_FILE_UNTRUSTED: 'DEX_FILE_UNTRUSTED',

  /**
   * The operator console (`qrvend console`, docs/console.md): its database cannot be opened,
   * migrated or written; its configuration or listen address is refused.
   */
  CONSOLE_STORE_FAILED: 'CONSOLE_STORE_FAILED',
  CONSOLE_LISTEN_REFUSED: 'CONSOLE_LISTEN_REFUSED',
  /** A webhook receiver URL or address the console will not send to (docs/security.md "Webhook receivers"). */
  CONSOLE_RECEIVER_REFUSED: 'CONSOLE_RECEIVER_REFUSED',
  /** The console's e-mail settings cannot be used: the credentials file unreadable or open to others. */
  CONSOLE_EMAIL_UNUSABLE: 'CONSOLE_EMAIL_UNUSABLE',
  /** A request to the console's pages with a parameter it refuses: answered 400 naming it, never logged. */
  CONSOLE_BAD_REQUEST: 'CONSOLE_BAD_REQUEST',

  /**
   * A signed document (the relay's registry, and any other the fleet keeps a version of) older than
   * the newest one verified here; the record of that newest version cannot be read or written
   * (src/trust/version-floor.ts, docs/security.md "Versions kept across restarts").
   */
  VERSION_ROLLBACK: 'VERSION_ROLLBACK',
  VERSION_FLOOR_FAILED: 'VERSION_FLOOR_FAILED',

  CLI_USAGE: 'CLI_USAGE',
  INTERNAL: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export interface QrvendErrorOptions {
  /** What a technician should do about it; appended to the message shown to people. */
  hint?: string;
  /** Structured context for logs. Never put secrets here. */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class QrvendError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: QrvendErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'QrvendError';
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
  }

  /** One line for a terminal: code, message and, when known, what to do. */
  describe(): string {
    return `${this.code}: ${this.message}${this.hint ? ` (${this.hint})` : ''}`;
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, hint: this.hint, details: this.details };
  }
}

export function isQrvendError(err: unknown, code?: ErrorCode): err is QrvendError {
  return err instanceof QrvendError && (code === undefined || err.code === code);
}

/** Process exit codes (sysexits.h where one fits), part of the outside contract. */
export const ExitCodes = {
  OK: 0,
  FAILURE: 1,
  USAGE: 64,
  UNAVAILABLE: 69,
  SOFTWARE: 70,
  IO: 74,
  CONFIG: 78,
  /**
   * EX_TEMPFAIL: a restart the fleet asked for (service.restart, config.set,
   * a rollback); Restart=always brings the agent back.
   */
  RESTART: 75,
} as const;
