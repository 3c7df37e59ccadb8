/**
 * The payment worker's side of the vend journal (docs/operations.md, "The vend journal").
 *
 * At start, before recovery: every charged vend result an earlier run kept in the journal and the
 * ledger does not hold is recorded, so recovery's Settlement counts it (static) or no Void is sent
 * for a vend that was dispensed (dynamic). Each step is one of the ledger's idempotent transitions
 * and a record is keyed by its transaction (and vend number), so replaying the same journal twice,
 * or a record the ledger already holds, changes nothing and charges nothing twice. A record whose
 * transaction is already closed without it is never forced in: it is logged for a person.
 *
 * While running: the results the machine loop journaled are acknowledged once the ledger holds them,
 * so the main thread can cut the journal back.
 */
import type { Logger } from '../core/log.js';
import type { MainToPayment } from '../ipc/messages.js';
import { isChargedVend } from '../ipc/vend-outcome.js';
import type { Ledger } from './ledger.js';
import { describeError } from './sqlite-errors.js';
import { vendKey, type VendJournalRecord } from './vend-journal.js';
import { readJournal } from './vend-journal-reader.js';

/** Where a journaled vend stands in the ledger. */
export type KeptState =
  /** The ledger holds it as charged. */
  | 'recorded'
  /** Its transaction is still open: the vend can (and must) be recorded. */
  | 'open'
  /** Unknown transaction, or closed without it: nothing can be recorded any more. */
  | 'moot';

type JournaledVend = Pick<VendJournalRecord, 'tx' | 'flow'> & { seq?: number };

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

function record(ledger: Ledger, r: VendJournalRecord): void {
  ledger.atomically(() => {
    const tx = ledger.getTransaction(r.tx)!;
    if (r.flow === 'dynamic') {
      if (tx.state === 'paid') ledger.approveVend(r.tx);
      ledger.recordVended(r.tx);
      return;
    }
    if (tx.state === 'authorized') ledger.openSession(r.tx);
    ledger.recordVendApproved(r.tx, { seq: r.seq, item: r.item, price: r.price });
    ledger.recordVendResult(r.tx, r.seq, r.outcome, JOURNAL_DETAIL);
  });
}

export interface TakeoverReport {
  /** Recorded now from the journal. */
  replayed: number;
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
    const report: TakeoverReport = { replayed: 0, alreadyRecorded: 0, moot: 0, failed: 0, torn: 0, damaged: 0 };
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
    for (const r of content.records) {
      if (r.run === this.o.run) continue;
      this.takeOne(r, report);
    }
    if (content.damaged > 0 || content.truncated) {
      const fields = { path: this.o.path, damaged: content.damaged, truncated: content.truncated };
      this.o.log.warn(fields, 'vend journal: damaged records dropped (a power cut leaves such)');
    }
    this.takenOver = report.failed === 0;
    if (report.replayed + report.moot + report.failed > 0) {
      this.o.log.warn({ ...report }, 'vend journal taken over: vends dispensed before a crash recorded');
    }
    return report;
  }

  private takeOne(r: VendJournalRecord, report: TakeoverReport): void {
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
        record(this.ledger, r);
        report.replayed += 1;
        this.o.log.warn(fields, 'vend journal: a vend dispensed before a crash, recorded now');
      }
    } catch (err) {
      report.failed += 1;
      const why = 'could not record a vend now; tried again when the ledger takes writes';
      this.o.log.error({ ...fields, err: describeError(err) }, `vend journal: ${why}`);
    }
  }

  /** A message the payment flows have just handled: a charged result is followed until the ledger holds it. */
  note(message: MainToPayment): void {
    if (message.type !== 'vend.result' || message.txId === null || !isChargedVend(message.outcome)) return;
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
