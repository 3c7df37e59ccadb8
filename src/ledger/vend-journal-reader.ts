/**
 * Reads the vend journal (its format: vend-journal.ts; docs/operations.md, "The vend journal"):
 * whole lines with a good checksum and fields; a torn last record, a power cut's zeros and garbage
 * are counted and dropped, never read as something else. Everything in the file is checked as if
 * it came from outside: bounded in size, each record's fields validated.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { z } from 'zod';
import type { VendOutcome } from '../ipc/messages.js';
import { checksum, CHECKSUM_CHARS, MAX_JOURNAL_BYTES, MAX_RECORD_BYTES, RECORD_MAGIC } from './vend-journal.js';
import type { VendJournalRecord } from './vend-journal.js';

const VEND_OUTCOMES = [
  'success',
  'failed',
  'cancelled',
  'reset',
  'timeout',
  'expired',
] as const satisfies readonly VendOutcome[];

const common = {
  run: z.string().regex(/^[0-9a-f]{8}$/),
  n: z.number().int().nonnegative(),
  at: z.number().int().nonnegative(),
  tx: z.string().min(1).max(64),
};
const staticVend = {
  flow: z.literal('static'),
  seq: z.number().int().positive(),
  item: z.number().int().nonnegative(),
  price: z.number().nonnegative().finite(),
};
const dynamicVend = { flow: z.literal('dynamic'), req: z.string().min(1).max(64) };
const approval = { kind: z.literal('approval') };
// No `kind`: a result written by an earlier version (vend-journal.ts).
const result = { kind: z.literal('result').optional(), outcome: z.enum(VEND_OUTCOMES) };
const journalRecord: z.ZodType<VendJournalRecord> = z.union([
  z.object({ ...common, ...staticVend, ...approval }).strict(),
  z.object({ ...common, ...dynamicVend, ...approval }).strict(),
  z.object({ ...common, ...staticVend, ...result }).strict(),
  z.object({ ...common, ...dynamicVend, ...result }).strict(),
]);

export type LineVerdict =
  { ok: true; record: VendJournalRecord } | { ok: false; why: 'too-long' | 'checksum' | 'malformed' };

/** One line, without its line end. */
export function decodeLine(line: string): LineVerdict {
  if (Buffer.byteLength(line, 'utf8') >= MAX_RECORD_BYTES) return { ok: false, why: 'too-long' };
  const head = `${RECORD_MAGIC} `;
  const shaped = line.startsWith(head) && line.charAt(head.length + CHECKSUM_CHARS) === ' ';
  if (!shaped) return { ok: false, why: 'malformed' };
  const sum = line.slice(head.length, head.length + CHECKSUM_CHARS);
  const json = line.slice(head.length + CHECKSUM_CHARS + 1);
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
