/**
 * The vend journal (docs/operations.md, "The vend journal"): the vends the machine loop approved
 * to the VMC and what the VMC reported of them, kept on the main thread's side before anything
 * travels to the payment worker, so a process kill loses no vend the VMC may have dispensed. This
 * module is its format;
 * the writer is vend-journal-writer.ts (main thread), the take-over vend-journal-takeover.ts
 * (payment worker, at start), the reader vend-journal-reader.ts. No zod here: the main thread loads
 * this module, and keeps every module it loads (test/daemon/main-thread-modules.test.ts).
 *
 * One record per line, at most MAX_RECORD_BYTES with its line end:
 *
 *   qv1 <first 8 hex digits of the SHA-256 of the JSON text> <JSON text>\n
 *
 * A record whose line end, checksum or fields are wrong is dropped, never read as something else:
 * the last record of a process killed mid-write (torn), the zeros or garbage a power cut leaves in a
 * file written without fsync.
 *
 * Two kinds of record: an approval (`"kind":"approval"`), written just before C,VEND,<amount> goes
 * to the board; and a result (`"kind":"result"`, or no kind: the records of earlier versions, which
 * journaled charged results only). A result is journaled when it is charged (a success, or a reset
 * after the approval, src/ipc/vend-outcome.ts), and any result of a vend whose approval is in the
 * journal: an approval with no result is a reset after VEND APPROVED, a sale (MDB 4.2 7.4.7;
 * docs/decisions/sales-and-recovery.md), so the result that says otherwise must be kept too.
 */
import { createHash } from 'node:crypto';
import type { VendOutcome } from '../ipc/messages.js';

/** `<store.path>.vend-journal`: beside the ledger, in the ledger's directory. */
export function vendJournalPathFor(storePath: string): string {
  return `${storePath}.vend-journal`;
}

/** A record longer than this (line end included) is never written, and dropped when read. */
export const MAX_RECORD_BYTES = 512;
/** The writer stops appending (and raises its alarm) at this size; the reader reads no further. */
export const MAX_JOURNAL_BYTES = 64 * 1024;

export const RECORD_MAGIC = 'qv1';
export const CHECKSUM_CHARS = 8;

interface RecordCommon {
  /** The writing process's run id (8 hex digits): a run's own records are not taken over by itself. */
  run: string;
  /** Order of the record within its run. */
  n: number;
  /** Wall-clock time of the write (epoch ms), for a person reading the file. */
  at: number;
  /** The gateway TransactionId. */
  tx: string;
}

/** Which vend: a static session's vend (its number, item and price) or a dynamic QR vend. */
export type JournaledVendRef =
  { flow: 'static'; seq: number; item: number; price: number } | { flow: 'dynamic'; req: string };

/** The reader approved this vend to the VMC (written just before C,VEND,<amount>). */
export type ApprovalRecord = RecordCommon & JournaledVendRef & { kind: 'approval' };
/** What the VMC reported of a vend (no `kind`: written by an earlier version, always charged). */
export type ResultRecord = RecordCommon & JournaledVendRef & { kind?: 'result'; outcome: VendOutcome };

export type VendJournalRecord = ApprovalRecord | ResultRecord;

export function isApproval(record: VendJournalRecord): record is ApprovalRecord {
  return record.kind === 'approval';
}

/** The key that names one vend in the journal, in the payment worker's acknowledgements and the take-over. */
export function vendKey(record: { tx: string; flow: 'static' | 'dynamic'; seq?: number }): string {
  return record.flow === 'static' ? `${record.tx}#${record.seq}` : record.tx;
}

export function checksum(json: string): string {
  return createHash('sha256').update(json).digest('hex').slice(0, CHECKSUM_CHARS);
}

/** One record as its line (line end included), or null when it would exceed MAX_RECORD_BYTES. */
export function encodeRecord(record: VendJournalRecord): Buffer | null {
  const json = JSON.stringify(record);
  const line = Buffer.from(`${RECORD_MAGIC} ${checksum(json)} ${json}\n`, 'utf8');
  return line.length <= MAX_RECORD_BYTES ? line : null;
}
