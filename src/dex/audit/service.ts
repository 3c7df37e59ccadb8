/**
 * The audit's end in the payment worker: takes each `dex.audit` from the main thread, processes it
 * (process.ts), raises and clears DEX_READ_FAILED and AUDIT_MISMATCH, and serves the fleet's
 * `dex.read` by asking the main thread for a read and answering with what it found.
 */
import type { Logger } from '../../core/log.js';
import type { Ledger } from '../../ledger/index.js';
import type { MainToPayment, PaymentToMain } from '../../ipc/messages.js';
import { processAuditRead, type AuditOutcome } from './process.js';
import type { CashlessDevice } from './reconcile.js';

/** Reads that failed in a row (link errors, or files that failed their check) before DEX_READ_FAILED. */
export const FAILED_READS_BEFORE_ALARM = 3;
/** A dex.read command gives up waiting after this; the read itself is bounded by the link's timers. */
export const COMMAND_DEADLINE_MS = 5 * 60_000;

export type AuditAlarm = 'DEX_READ_FAILED' | 'AUDIT_MISMATCH';

export interface DexAuditServiceOptions {
  ledger: Ledger;
  device: CashlessDevice;
  tolerance: number;
  /** False when dex.port is null: dex.read is refused. */
  configured: boolean;
  toMain: (message: PaymentToMain) => void;
  observe: (code: AuditAlarm, active: boolean, detail: string | null) => void;
  log: Logger;
}

/** Why a dex.read could not be answered with an audit; the fleet side maps `code` to its reply code. */
export class DexCommandError extends Error {
  constructor(
    readonly code: 'BUSY' | 'UNAVAILABLE' | 'TOO_LATE' | 'FAILED',
    message: string,
  ) {
    super(message);
  }
}

type Waiter = { resolve: (result: unknown) => void; reject: (err: Error) => void; timer: NodeJS.Timeout };

export class DexAuditService {
  private failures = 0;
  private nextRequestId = 1;
  private readonly waiting = new Map<number, Waiter>();

  constructor(private readonly o: DexAuditServiceOptions) {}

  handle(message: Extract<MainToPayment, { type: 'dex.audit' }>): void {
    const waiter = message.requestId === null ? undefined : this.waiting.get(message.requestId);
    if (waiter) {
      this.waiting.delete(message.requestId!);
      clearTimeout(waiter.timer);
    }
    const { read } = message;
    if (!read.ok) {
      // A refused second read is not a failed one: the running read will say how it went.
      if (read.code !== 'DEX_BUSY') this.failed(`${read.code}: ${read.message}`);
      waiter?.reject(
        new DexCommandError(read.code === 'DEX_BUSY' ? 'BUSY' : 'FAILED', `${read.code}: ${read.message}`),
      );
      return;
    }
    let outcome: AuditOutcome;
    try {
      outcome = processAuditRead(
        {
          trigger: message.trigger,
          atMs: message.atMs,
          protocol: read.protocol,
          durationMs: read.durationMs,
          bytes: Buffer.from(read.bytes.buffer, read.bytes.byteOffset, read.bytes.byteLength),
        },
        {
          audits: this.o.ledger.dexAudits,
          device: this.o.device,
          decimalPlaces: this.o.ledger.decimalPlaces,
          tolerance: this.o.tolerance,
        },
      );
    } catch (err) {
      // The ledger refused the write (disk): the read is lost, the alarm for the disk says why.
      this.o.log.error({ err: (err as Error).message }, 'dex: the audit could not be stored');
      waiter?.reject(
        new DexCommandError('FAILED', `the audit was read but could not be stored: ${(err as Error).message}`),
      );
      return;
    }
    const { reconciliation: rec } = outcome;
    this.o.log.info(
      {
        event: 'dex.audit',
        auditId: outcome.auditId,
        bytes: read.bytes.byteLength,
        protocol: read.protocol,
        check: outcome.checkOk,
        series: outcome.series,
        interval: outcome.interval.kind,
        reconciliation: rec.status,
      },
      'dex: audit stored',
    );
    if (outcome.checkOk) this.succeeded();
    else this.failed(`the file read failed its check: ${outcome.reason}`);
    if (rec.status !== 'skipped') {
      if (rec.status === 'mismatch')
        this.o.log.warn(
          { code: 'AUDIT_MISMATCH', vmc: rec.vmc, ledger: rec.ledger, difference: rec.difference },
          rec.message,
        );
      this.o.observe('AUDIT_MISMATCH', rec.status === 'mismatch', rec.message);
    }
    waiter?.resolve({
      auditId: outcome.auditId,
      protocol: read.protocol,
      bytes: read.bytes.byteLength,
      durationMs: read.durationMs,
      check: { ok: outcome.checkOk, reason: outcome.reason },
      series: outcome.series,
      interval: outcome.interval,
      reconciliation: rec,
    });
  }

  /** The fleet's `dex.read`: one read now, answered with what was stored. */
  command(): Promise<unknown> {
    if (!this.o.configured)
      return Promise.reject(new DexCommandError('UNAVAILABLE', 'no DEX line on this machine: dex.port is not set'));
    const requestId = this.nextRequestId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(requestId);
        reject(
          new DexCommandError(
            'TOO_LATE',
            'the audit read did not end in time; its result will still be stored and published',
          ),
        );
      }, COMMAND_DEADLINE_MS);
      timer.unref();
      this.waiting.set(requestId, { resolve, reject, timer });
      this.o.toMain({ type: 'dex.read', requestId });
    });
  }

  close(): void {
    for (const [id, w] of this.waiting) {
      clearTimeout(w.timer);
      w.reject(new DexCommandError('UNAVAILABLE', 'the agent is stopping'));
      this.waiting.delete(id);
    }
  }

  private failed(detail: string): void {
    this.failures++;
    if (this.failures >= FAILED_READS_BEFORE_ALARM)
      this.o.observe(
        'DEX_READ_FAILED',
        true,
        `${this.failures} audit reads in a row failed; the last: ${detail}`.slice(0, 500),
      );
  }

  private succeeded(): void {
    this.failures = 0;
    this.o.observe('DEX_READ_FAILED', false, null);
  }
}
