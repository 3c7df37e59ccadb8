/**
 * The vend journal (docs/operations.md, "The vend journal"): what the machine loop saw the VMC
 * dispense, kept on the main thread's side before the result travels to the payment worker, so a
 * process kill between the two loses no dispensed vend. This module is its format and its reader;
 * the writer is vend-journal-writer.ts (main thread), the take-over vend-journal-takeover.ts
 * (payment worker, at start).
 *
 * One record per line, at most MAX_RECORD_BYTES with its line end:
 *
 *   qv1 <first 8 hex digits of the SHA-256 of the JSON text> <JSON text>\n
 *
 * A record whose line end, checksum or fields are wrong is dropped, never read as something else:
 * the last record of a process killed mid-write (torn), the zeros or garbage a power cut leaves in a
 * file written without fsync. Only charged outcomes are kept (a success, or a reset after the
 * approval, src/ipc/vend-outcome.ts): a vend whose result never reached the ledger counts as failed
 * anyway, so a failure needs no record.
 */
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { z } from 'zod';
import { CHARGED_VEND_OUTCOMES } from '../ipc/vend-outcome.js';

/** `<store.path>.vend-journal`: beside the ledger, in the ledger's directory. */
export function vendJournalPathFor(storePath: string): string {
  return `${storePath}.vend-journal`;
}

/** A record longer than this (line end included) is never written, and dropped when read. */
export const MAX_RECORD_BYTES = 512;
/** The writer stops appending (and raises its alarm) at this size; the reader reads no further. */
export const MAX_JOURNAL_BYTES = 64 * 1024;

const MAGIC = 'qv1';
const HASH_CHARS = 8;

const chargedOutcome = z.enum(CHARGED_VEND_OUTCOMES);
const common = {
  /** The writing process's run id: a run's own records are not taken over by itself. */
  run: z.string().regex(/^[0-9a-f]{8}$/),
  /** Order of the record within its run. */
  n: z.number().int().nonnegative(),
  /** Wall-clock time of the write (epoch ms), for a person reading the file. */
  at: z.number().int().nonnegative(),
  tx: z.string().min(1).max(64),
  outcome: chargedOutcome,
};
const staticRecord = z
  .object({
    ...common,
    flow: z.literal('static'),
    seq: z.number().int().positive(),
    item: z.number().int().nonnegative(),
    price: z.number().nonnegative().finite(),
  })
  .strict();
const dynamicRecord = z.object({ ...common, flow: z.literal('dynamic'), req: z.string().min(1).max(64) }).strict();
const journalRecord = z.discriminatedUnion('flow', [staticRecord, dynamicRecord]);

export type VendJournalRecord = z.infer<typeof journalRecord>;

/** The key that names one vend in the journal, in the payment worker's acknowledgements and the take-over. */
export function vendKey(record: { tx: string; flow: 'static' | 'dynamic'; seq?: number }): string {
  return record.flow === 'static' ? `${record.tx}#${record.seq}` : record.tx;
}

function checksum(json: string): string {
  return createHash('sha256').update(json).digest('hex').slice(0, HASH_CHARS);
}

/** One record as its line (line end included), or null when it would exceed MAX_RECORD_BYTES. */
export function encodeRecord(record: VendJournalRecord): Buffer | null {
  const json = JSON.stringify(record);
  const line = Buffer.from(`${MAGIC} ${checksum(json)} ${json}\n`, 'utf8');
  return line.length <= MAX_RECORD_BYTES ? line : null;
}

export type LineVerdict =
  | { ok: true; record: VendJournalRecord }
  | { ok: false; why: 'too-long' | 'checksum' | 'malformed' };

/** One line, without its line end. */
export function decodeLine(line: string): LineVerdict {
  if (Buffer.byteLength(line, 'utf8') >= MAX_RECORD_BYTES) return { ok: false, why: 'too-long' };
  const head = `${MAGIC} `;
  if (!line.startsWith(head) || line.charAt(head.length + HASH_CHARS) !== ' ') return { ok: false, why: 'malformed' };
  const sum = line.slice(head.length, head.length + HASH_CHARS);
  const json = line.slice(head.length + HASH_CHARS + 1);
  if (checksum(json) !== sum) return { ok: false, why: 'checksum' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { ok: false, why: 'malformed' };
  }
  const checked = journalRecord.safeParse(parsed);
  return checked.success ? { ok: true, record: checked.data } : { ok: false, why: 'malformed' };
}

export interface JournalContent {
  records: VendJournalRecord[];
  /** A last record without its line end: a write cut short (a kill mid-write). Dropped. */
  torn: number;
  /** Whole lines that fail the checksum or the format (a power cut's garbage). Dropped. */
  damaged: number;
  /** The file was longer than MAX_JOURNAL_BYTES: only that much was read. */
  truncated: boolean;
}

/** Reads records from the journal's bytes: whole lines with a good checksum and fields; the rest counted. */
export function parseJournal(bytes: Buffer): JournalContent {
  const content: JournalContent = { records: [], torn: 0, damaged: 0, truncated: false };
  let start = 0;
  while (start < bytes.length) {
    // Zeros before a record are a power cut's hole in a file written without fsync: skipped.
    while (start < bytes.length && bytes[start] === 0) start += 1;
    if (start >= bytes.length) break;
    const end = bytes.indexOf(0x0a, start);
    if (end < 0) {
      content.torn += 1;
      break;
    }
    const verdict = decodeLine(bytes.subarray(start, end).toString('utf8'));
    if (verdict.ok) content.records.push(verdict.record);
    else content.damaged += 1;
    start = end + 1;
  }
  return content;
}

/** Reads the journal at `path` (at most MAX_JOURNAL_BYTES); a missing file holds nothing. */
export function readJournal(path: string): JournalContent {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], torn: 0, damaged: 0, truncated: false };
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const want = Math.min(size, MAX_JOURNAL_BYTES);
    const bytes = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, bytes, got, want - got, got);
      if (n === 0) break;
      got += n;
    }
    const content = parseJournal(bytes.subarray(0, got));
    return { ...content, truncated: size > MAX_JOURNAL_BYTES };
  } finally {
    closeSync(fd);
  }
}
