/**
 * The payment worker's side of the vend journal (docs/operations.md, "The vend journal").
 *
 * At start, before recovery, each vend an earlier run journaled is taken over by one rule
 * (docs/decisions/sales-and-recovery.md):
 * - a charged result (a success, or a reset after the approval) the ledger does not hold is
 *   recorded, so recovery's Settlement counts it (static) or no Void is sent (dynamic);
 * - an approval with no result in the journal and none in the ledger is a reset after VEND
 *   APPROVED: the VMC had the approval and the reader died before its result (MDB 4.2 7.4.7, "A
 *   reset between VEND APPROVED and VEND SUCCESS shall be interpreted as a VEND SUCCESS"). It is
 *   recorded as the charged outcome `reset`, like the reset the machine loop reports itself;
 * - a result that is not charged (a failure, a cancel, a timeout) wins over its approval: nothing
 *   is written, and recovery counts the vend as failed.
 * Each step is one of the ledger's idempotent transitions and a vend is keyed by its transaction
 * (and vend number), so replaying the same journal twice, or a vend the ledger already holds,
 * changes nothing and charges nothing twice. A vend whose transaction is already closed without it
 * (settled, cancelled, voided, or another outcome recorded) is never forced in.
 *
 * While running: the results the machine loop journaled are acknowledged once the ledger holds them,
 * so the main thread can cut the journal back.
 */
import type { Logger } from '../core/log.js';
import type { MainToPayment } from '../ipc/messages.js';
import { isChargedVend } from '../ipc/vend-outcome.js';
import type { Ledger } from './ledger.js';
import { describeError } from './sqlite-errors.js';
import { isApproval, vendKey, type ApprovalRecord, type ResultRecord, type VendJournalRecord } from './vend-journal.js';
import { readJournal } from './vend-journal-reader.js';

/** Where a journaled vend stands in the ledger. */
export type KeptState =
  /** The ledger holds it as charged. */
  | 'recorded'
  /** Its transaction is still open: the vend can (and must) be recorded. */
  | 'open'
  /** Unknown transaction, or closed without it: nothing can be recorded any more. */
  | 'moot';

type JournaledVend = { tx: string; flow: 'static' | 'dynamic'; seq?: number };

export function keptState(ledger: Ledger, vend: JournaledVend): KeptState {
  const tx = ledger.getTransaction(vend.tx);
  if (tx === null || tx.flow !== vend.flow) return 'moot';
  if (vend.flow === 'dynamic') {
    if (tx.state === 'vended') return 'recorded';
    return tx.state === 'paid' || tx.state === 'vend_approved' ? 'open' : 'moot';
  }
  const line = ledger.vendsOf(vend.tx).find((v) => v.seq === vend.seq);
  if (line !== undefined && isChargedVend(line.state)) return 'recorded';
  if (line !== undefined && line.state !== 'approved') return 'moot'; // another outcome was recorded: never overruled
  return tx.state === 'authorized' || tx.state === 'session_open' ? 'open' : 'moot';
}

const JOURNAL_DETAIL = 'kept by the vend journal before a crash, recorded at the next start';
/** The log line of an approval charged at start (tests and the chaos run look for it). */
export const APPROVAL_CHARGED_LOG =
  'vend journal: a vend approved to the VMC before a crash, its result never heard: ' +
  'charged as a reset after the approval (MDB 4.2 7.4.7)';
const RESET_RULE_DETAIL =
  'approved to the VMC before a crash, no result heard: a reset after VEND APPROVED is a sale (MDB 4.2 7.4.7)';

/** Records a charged outcome (the journal's result, or `reset` for an approval with none). */
function record(ledger: Ledger, r: ResultRecord, detail: string): void {
  ledger.atomically(() => {
    const tx = ledger.getTransaction(r.tx)!;
    if (r.flow === 'dynamic') {
      if (tx.state === 'paid') ledger.approveVend(r.tx);
      ledger.recordVended(r.tx);
      return;
    }
    if (tx.state === 'authorized') ledger.openSession(r.tx);
    ledger.recordVendApproved(r.tx, { seq: r.seq, item: r.item, price: r.price });
    ledger.recordVendResult(r.tx, r.seq, r.outcome, detail);
  });
}

/** One vend of the journal: its approval and its result, when written. */
interface JournaledEntry {
  approval: ApprovalRecord | null;
  result: ResultRecord | null;
}

/** Earlier runs' records by vend; of two results for one vend, a charged one wins. */
function entriesOf(records: readonly VendJournalRecord[], ownRun: string): Map<string, JournaledEntry> {
  const entries = new Map<string, JournaledEntry>();
  for (const r of records) {
    if (r.run === ownRun) continue;
    const key = vendKey(r);
    const entry = entries.get(key) ?? { approval: null, result: null };
    entries.set(key, entry);
    if (isApproval(r)) entry.approval ??= r;
    else if (entry.result === null || !isChargedVend(entry.result.outcome)) entry.result = r;
  }
  return entries;
}

export interface TakeoverReport {
  /** Charged results recorded now from the journal. */
  replayed: number;
  /** Approvals with no result anywhere, charged now as a reset after VEND APPROVED (MDB 4.2 7.4.7). */
  chargedByResetRule: number;
  /** Results that are not charged (they win over their approval): left to recovery, which fails the vend. */
  notSold: number;
  /** Already in the ledger. */
  alreadyRecorded: number;
  /** Their transaction is unknown or closed without them: logged, nothing written. */
  moot: number;
  /** Could not be written now (the ledger refused): tried again when it takes writes. */
  failed: number;
  torn: number;
  damaged: number;
}

export class VendJournalTakeover {
  /** This run's results the machine loop journaled and the ledger does not hold yet. */
  private readonly unkept = new Map<string, JournaledVend>();
  private takenOver = false;

  constructor(
    private readonly ledger: Ledger,
    private readonly o: { path: string; run: string; log: Logger },
  ) {}

  /** Whether every earlier run's record is in the ledger (or moot). */
  get done(): boolean {
    return this.takenOver;
  }

  /** Records what earlier runs journaled and the ledger lacks. Run it before recoverLedger. */
  takeOver(): TakeoverReport {
    const report: TakeoverReport = {
      replayed: 0,
      chargedByResetRule: 0,
      notSold: 0,
      alreadyRecorded: 0,
      moot: 0,
      failed: 0,
      torn: 0,
      damaged: 0,
    };
    let content;
    try {
      content = readJournal(this.o.path);
    } catch (err) {
      const fields = { path: this.o.path, err: (err as Error).message };
      this.o.log.error(fields, 'the vend journal cannot be read: vends it kept stay unrecorded until it can');
      report.failed = 1;
      return report;
    }
    report.torn = content.torn;
    report.damaged = content.damaged;
    for (const entry of entriesOf(content.records, this.o.run).values()) {
      if (entry.result !== null && isChargedVend(entry.result.outcome)) this.takeResult(entry.result, report);
      else if (entry.result !== null) report.notSold += 1;
      else if (entry.approval !== null) this.takeApproval(entry.approval, report);
    }
    if (content.damaged > 0 || content.truncated) {
      const fields = { path: this.o.path, damaged: content.damaged, truncated: content.truncated };
      this.o.log.warn(fields, 'vend journal: damaged records dropped (a power cut leaves such)');
    }
    this.takenOver = report.failed === 0;
    if (report.replayed + report.chargedByResetRule + report.moot + report.failed > 0) {
      this.o.log.warn({ ...report }, 'vend journal taken over: vends dispensed before a crash recorded');
    }
    return report;
  }

  private takeResult(r: ResultRecord, report: TakeoverReport): void {
    const fields = { txId: r.tx, flow: r.flow, seq: r.flow === 'static' ? r.seq : null, outcome: r.outcome };
    try {
      const state = keptState(this.ledger, r);
      if (state === 'recorded') {
        report.alreadyRecorded += 1;
      } else if (state === 'moot') {
        report.moot += 1;
        const why = 'a dispensed vend whose transaction is unknown or already closed without it';
        this.o.log.error(fields, `vend journal: ${why}; reconcile it with the gateway provider`);
      } else {
        record(this.ledger, r, JOURNAL_DETAIL);
        report.replayed += 1;
        this.o.log.warn(fields, 'vend journal: a vend dispensed before a crash, recorded now');
      }
    } catch (err) {
      report.failed += 1;
      const why = 'could not record a vend now; tried again when the ledger takes writes';
      this.o.log.error({ ...fields, err: describeError(err) }, `vend journal: ${why}`);
    }
  }

  /**
   * An approval journaled with no result: charged as `reset` while its transaction is open; left
   * alone when the ledger holds it charged or closed it otherwise (its result was recorded).
   */
  private takeApproval(a: ApprovalRecord, report: TakeoverReport): void {
    const fields = { txId: a.tx, flow: a.flow, seq: a.flow === 'static' ? a.seq : null };
    try {
      const state = keptState(this.ledger, a);
      if (state === 'recorded') report.alreadyRecorded += 1;
      else if (state === 'moot') report.moot += 1;
      else {
        record(this.ledger, { ...a, kind: 'result', outcome: 'reset' }, RESET_RULE_DETAIL);
        report.chargedByResetRule += 1;
        this.o.log.warn(fields, APPROVAL_CHARGED_LOG);
      }
    } catch (err) {
      report.failed += 1;
      const why = 'could not record an approved vend now; tried again when the ledger takes writes';
      this.o.log.error({ ...fields, err: describeError(err) }, `vend journal: ${why}`);
    }
  }

  /**
   * A message the payment flows have just handled: a vend result is followed until the ledger
   * holds it (any outcome: the machine loop journals the result of every vend it journaled the
   * approval of).
   */
  note(message: MainToPayment): void {
    if (message.type !== 'vend.result' || message.txId === null) return;
    const tx = message.txId;
    const vend: JournaledVend =
      message.requestId !== null ? { tx, flow: 'dynamic' } : { tx, flow: 'static', seq: message.vendSeq ?? 0 };
    this.unkept.set(vendKey(vend), vend);
  }

  /** Keys of this run's results now in the ledger (or that can no longer be), for the main thread. */
  settle(): string[] {
    const settled: string[] = [];
    for (const [key, vend] of this.unkept) {
      let state: KeptState;
      try {
        state = keptState(this.ledger, vend);
      } catch {
        continue; // the ledger cannot be read now: asked again later
      }
      if (state === 'open') continue;
      this.unkept.delete(key);
      settled.push(key);
    }
    return settled;
  }
}
