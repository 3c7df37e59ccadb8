/**
 * The doctor's vocabulary: a check looks at one thing and says OK, WARN or FAIL, with what to do
 * about anything that is not OK. Checks run in a fixed order and may read facts that earlier
 * checks recorded (the board check needs to know whether the serial port was busy).
 */
import type { OverlayState } from '../config/load.js';
import type { QrvendConfig } from '../config/schema.js';
import type { QrvendError } from '../core/errors.js';
import type { LedgerInspection } from '../ledger/inspect.js';

export type CheckStatus = 'OK' | 'WARN' | 'FAIL';

export interface CheckOutcome {
  status: CheckStatus;
  /** One line: what was found. Never a secret. */
  summary: string;
  /** What a technician should do; set whenever status is not OK. */
  action?: string;
  /** Structured facts for --json (numbers, paths, versions). Never a secret. */
  details?: Record<string, unknown>;
}

export interface CheckResult extends CheckOutcome {
  id: string;
  title: string;
}

/** What the serial check found, for the checks that need the port after it. */
export type SerialState = 'sim' | 'usable' | 'busy' | 'missing' | 'unusable';

export interface DoctorFacts {
  serial?: SerialState;
  /** The gateway's Date header, when it answered with one. */
  gatewayDate?: Date;
  /** Wall-clock time of that answer, to compare the two clocks at the same moment. */
  gatewayDateSeenAt?: Date;
}

/** A ledger look-up done once and shared by the ledger and outbox checks. */
export type LedgerLook =
  | { kind: 'inspected'; inspection: LedgerInspection }
  | { kind: 'missing'; path: string }
  | { kind: 'error'; message: string };

export interface DoctorContext {
  /** The site config file given (or QRVEND_CONFIG), if any. */
  configFile: string | undefined;
  /** Null when the configuration could not be loaded; `configError` then says why. */
  config: QrvendConfig | null;
  configError: QrvendError | null;
  /** What became of the fleet's configuration overlay (absent in contexts built by hand). */
  configOverlay?: OverlayState | null;
  env: NodeJS.ProcessEnv;
  now(): Date;
  facts: DoctorFacts;
  ledger(): LedgerLook;
}

/** Most checks need a loaded configuration and are skipped (WARN) without one. */
export type Check =
  | {
      id: string;
      title: string;
      needsConfig: true;
      run(ctx: DoctorContext, config: QrvendConfig): Promise<CheckOutcome>;
    }
  | { id: string; title: string; needsConfig: false; run(ctx: DoctorContext): Promise<CheckOutcome> };

export interface DoctorReport {
  /** False when any check failed. */
  ok: boolean;
  counts: Record<CheckStatus, number>;
  results: CheckResult[];
}
