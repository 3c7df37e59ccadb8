/**
 * The vend journal's writer, on the main thread (docs/operations.md, "The vend journal"). The
 * machine loop hands it each vend it approves just before C,VEND,<amount> is written to the board
 * (approving), and every message it posts to the payment worker, before it is posted (observe): the
 * approval, and the result of a vend whose approval is journaled or that is charged, are appended
 * with one plain write(2) each on a file opened O_APPEND, no fsync. The kernel has the bytes when
 * the call returns, so a process kill (SIGKILL, the OOM killer, a crash) cannot lose them; the
 * machine loop never waits on the disk beyond that call.
 *
 * The payment worker says which results it has recorded in the ledger (and when it has taken over
 * what earlier runs left); once nothing is pending the file is cut back to empty, usually long
 * before the kernel writes it out, so the journal costs the SD card next to nothing.
 *
 * When the journal cannot be written (disk full, I/O errors, the bound reached), the sale goes on
 * as it did before the journal existed: the result still goes to the payment worker, which records
 * it; only a kill in between would lose it. An alarm says so until a write succeeds again.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import type { Logger } from '../core/log.js';
import { ErrorCodes } from '../core/errors.js';
import type { MainToPayment } from '../ipc/messages.js';
import { isChargedVend, type VendApproval } from '../ipc/vend-outcome.js';
import { encodeRecord, MAX_JOURNAL_BYTES, vendKey } from './vend-journal.js';
import type { JournaledVendRef, VendJournalRecord } from './vend-journal.js';

export interface VendJournalWriterOptions {
  path: string;
  log: Logger;
  /** The journal cannot be written (active, with why) or can again. */
  onTrouble?: (active: boolean, detail: string | null) => void;
  /** Epoch ms for the records' `at` (default Date.now). */
  now?: () => number;
  maxBytes?: number;
}

/** A static vend approved and waiting for its result; more than this many at once is no VMC. */
const MAX_OPEN_APPROVALS = 16;

export class VendJournalWriter {
  /** This process's run id: the payment worker takes over only other runs' records. */
  readonly run = randomBytes(4).toString('hex');
  private fd: number | null = null;
  private bytes = 0;
  private n = 0;
  /** Records of earlier runs are in the file and the payment worker has not taken them over yet. */
  private carried = false;
  private readonly pending = new Set<string>();
  private readonly approvals = new Map<string, { item: number; price: number }>();
  /** Vends whose approval this run journaled and whose result has not come yet. */
  private readonly journaled = new Set<string>();
  private trouble: string | null = null;
  private readonly maxBytes: number;
  private readonly now: () => number;

  constructor(private readonly o: VendJournalWriterOptions) {
    this.maxBytes = o.maxBytes ?? MAX_JOURNAL_BYTES;
    this.now = o.now ?? Date.now;
    // Opened now when the directory exists (the ledger's directory is made by the payment worker
    // at the first start; no vend can end before it is ready).
    this.tryOpen(false);
  }

  /** Records still pending (for tests and the stats). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * The machine loop is about to write C,VEND,<amount> for this vend. Once the VMC has it, a
   * restart that never hears its result charges it (MDB 4.2 7.4.7; docs/decisions/sales-and-recovery.md).
   */
  approving(approval: VendApproval): void {
    const vend: JournaledVendRef =
      approval.flow === 'static'
        ? { flow: 'static', seq: approval.vendSeq, item: approval.item, price: approval.price }
        : { flow: 'dynamic', req: approval.requestId };
    if (vend.flow === 'static') this.rememberApproval(`${approval.txId}#${vend.seq}`, vend);
    const base = { run: this.run, n: this.n++, at: this.now(), tx: approval.txId };
    const record: VendJournalRecord = { ...base, kind: 'approval', ...vend };
    if (!this.append(record)) return;
    if (this.journaled.size >= MAX_OPEN_APPROVALS) this.journaled.delete(this.journaled.values().next().value!);
    this.journaled.add(vendKey(record));
  }

  /** Every message the machine loop posts passes here first. */
  observe(message: MainToPayment): void {
    if (message.type === 'vend.approved') {
      this.rememberApproval(`${message.txId}#${message.vendSeq}`, message);
      return;
    }
    if (message.type !== 'vend.result' || message.txId === null) return;
    const approval = message.vendSeq === null ? undefined : this.approvals.get(`${message.txId}#${message.vendSeq}`);
    if (message.vendSeq !== null) this.approvals.delete(`${message.txId}#${message.vendSeq}`);
    const vend: JournaledVendRef | null =
      message.requestId !== null
        ? { flow: 'dynamic', req: message.requestId }
        : message.vendSeq !== null && approval !== undefined
          ? { flow: 'static', seq: message.vendSeq, ...approval }
          : null; // a static result whose approval this run never saw: nothing to record it with
    if (vend === null) return;
    // A result that says "not sold" matters only when its approval is journaled (it overrules it).
    const approvalJournaled = this.journaled.delete(vendKey({ tx: message.txId, ...vend }));
    if (!approvalJournaled && !isChargedVend(message.outcome)) return;
    const base = { run: this.run, n: this.n++, at: this.now(), tx: message.txId };
    this.append({ ...base, kind: 'result', outcome: message.outcome, ...vend });
  }

  private rememberApproval(key: string, vend: { item: number; price: number }): void {
    if (this.approvals.size >= MAX_OPEN_APPROVALS) this.approvals.delete(this.approvals.keys().next().value!);
    this.approvals.set(key, { item: vend.item, price: vend.price });
  }

  /** From the payment worker: these results are in the ledger; earlier runs' records are taken over. */
  recorded(keys: readonly string[], takenOver: boolean): void {
    for (const key of keys) this.pending.delete(key);
    if (takenOver) this.carried = false;
    if (this.pending.size === 0 && !this.carried && this.bytes > 0 && this.fd !== null) {
      try {
        ftruncateSync(this.fd, 0);
        this.bytes = 0;
      } catch (err) {
        this.fail(`could not be cut back: ${(err as Error).message}`);
      }
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** True when the record is in the file. */
  private append(record: VendJournalRecord): boolean {
    const line = encodeRecord(record);
    if (line === null) return this.fail('a record exceeded its size bound');
    if (this.fd === null && !this.tryOpen(true)) return false;
    if (this.bytes + line.length > this.maxBytes) {
      return this.fail(`it reached its bound of ${this.maxBytes} bytes (its vends were not journaled)`);
    }
    try {
      const written = writeSync(this.fd!, line);
      if (written !== line.length) {
        // A short write (the disk filled up): cut it off, or it would swallow the next record.
        ftruncateSync(this.fd!, this.bytes);
        return this.fail(`a write was cut short (${written} of ${line.length} bytes)`);
      }
      this.bytes += written;
    } catch (err) {
      return this.fail(`a write failed: ${(err as Error).message}`);
    }
    this.pending.add(vendKey(record));
    this.clear();
    return true;
  }

  private tryOpen(report: boolean): boolean {
    try {
      this.fd = openSync(this.o.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o640);
      this.bytes = fstatSync(this.fd).size;
      this.carried = this.bytes > 0;
      return true;
    } catch (err) {
      this.fd = null;
      if (report) this.fail(`it cannot be opened: ${(err as Error).message}`);
      return false;
    }
  }

  private fail(why: string): false {
    const detail =
      `the vend journal ${this.o.path} cannot be written: ${why}. Sales go on, but a crash before the ledger ` +
      'records a dispensed vend would lose it: check the disk (qrvend doctor)';
    if (this.trouble === null) this.o.log.error({ code: ErrorCodes.LEDGER_JOURNAL_FAILED, path: this.o.path }, detail);
    if (this.trouble !== why) this.o.onTrouble?.(true, detail);
    this.trouble = why;
    return false;
  }

  private clear(): void {
    if (this.trouble === null) return;
    this.trouble = null;
    this.o.log.info({ path: this.o.path }, 'the vend journal takes writes again');
    this.o.onTrouble?.(false, null);
  }
}
