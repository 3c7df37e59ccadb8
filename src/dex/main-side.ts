/**
 * The audit reads on the main thread (docs/decisions/threads.md and docs/decisions/machine-audit.md): serialport lives
 * here, and a
 * read's work per byte is tiny, so it never delays the MDB line. Reads come from the schedule
 * (dex.intervalS) and from the payment worker (the fleet's dex.read); one at a time. Each ends as a
 * `dex.audit` message with the bytes, or with why there are none; the payment worker does the rest.
 * A failed scheduled read is tried again sooner (RETRY_AFTER_S) before the schedule resumes.
 */
import type { QrvendConfig } from '../config/schema.js';
import { ErrorCodes, isQrvendError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { DexAuditRead, MainToPayment } from '../ipc/messages.js';
import type { DexLink } from './link/index.js';

/** The first scheduled read comes this soon after start (or at dex.intervalS if that is sooner). */
export const FIRST_READ_AFTER_S = 60;
/** After a failed scheduled read: try again after these, then back to dex.intervalS. */
export const RETRY_AFTER_S = [60, 300, 900] as const;

export interface DexReadsOptions {
  dex: QrvendConfig['dex'];
  link: DexLink;
  post: (message: MainToPayment) => void;
  log: Logger;
  wallNow: () => number;
}

export interface DexReads {
  /** A read the payment side asked for (dex.read); refused with DEX_BUSY while one runs. */
  request(requestId: number): void;
  stop(): Promise<void>;
}

export function startDexReads(o: DexReadsOptions): DexReads {
  let busy = false;
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;

  const schedule = (seconds: number) => {
    if (stopped || o.dex.intervalS === 0) return;
    timer = setTimeout(() => void run('schedule', null), seconds * 1000);
    timer.unref();
  };

  const run = async (trigger: 'schedule' | 'command', requestId: number | null): Promise<void> => {
    if (busy) {
      // Only a command can meet a running read (the schedule waits for the read it started).
      post(trigger, requestId, {
        ok: false,
        code: ErrorCodes.DEX_BUSY,
        message: 'an audit read is already under way; ask again when it has ended',
      });
      return;
    }
    busy = true;
    let read: DexAuditRead;
    try {
      const r = await o.link.read();
      read = { ok: true, protocol: r.protocol, bytes: r.bytes, durationMs: r.durationMs };
    } catch (err) {
      read = isQrvendError(err)
        ? { ok: false, code: err.code, message: err.hint ? `${err.message} (${err.hint})` : err.message }
        : { ok: false, code: ErrorCodes.INTERNAL, message: (err as Error).message };
      o.log.warn({ code: read.code, trigger }, `dex: audit read failed: ${read.message}`);
    } finally {
      busy = false;
    }
    post(trigger, requestId, read);
    if (trigger === 'schedule') {
      failures = read.ok ? 0 : failures + 1;
      schedule(read.ok || failures > RETRY_AFTER_S.length ? o.dex.intervalS : RETRY_AFTER_S[failures - 1]!);
      if (failures > RETRY_AFTER_S.length) failures = 0;
    }
  };

  const post = (trigger: 'schedule' | 'command', requestId: number | null, read: DexAuditRead) => {
    if (!stopped) o.post({ type: 'dex.audit', requestId, trigger, atMs: o.wallNow(), read });
  };

  schedule(Math.min(FIRST_READ_AFTER_S, o.dex.intervalS));
  return {
    request: (requestId) => void run('command', requestId),
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await o.link.close();
    },
  };
}
