/**
 * The vend journal's format and its writer (src/ledger/vend-journal.ts, vend-journal-writer.ts) on
 * real files: what a kill mid-write, a power cut's garbage and the size bound leave, and what the
 * reader makes of it.
 */
import { test } from 'node:test';
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../src/core/log.js';
import type { MainToPayment } from '../../src/ipc/messages.js';
import { encodeRecord, MAX_RECORD_BYTES } from '../../src/ledger/vend-journal.js';
import { parseJournal, readJournal } from '../../src/ledger/vend-journal-reader.js';
import type { VendJournalRecord } from '../../src/ledger/vend-journal.js';
import { VendJournalWriter } from '../../src/ledger/vend-journal-writer.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function scratch(): { dir: string; path: string; done(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-vend-journal-'));
  const done = () => rmSync(dir, { recursive: true, force: true });
  return { dir, path: join(dir, 'ledger.sqlite.vend-journal'), done };
}

/** A logger that keeps what it was given (a mock: unit tests only). */
function keptLog(): { log: Logger; lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> } {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => {
    lines.push({ level, fields, msg });
  };
  const levels = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
  const log = { ...levels, isLevelEnabled: () => true };
  return { log: log as unknown as Logger, lines };
}

const staticRecord = (seq: number, price = 1.5): VendJournalRecord => ({
  run: 'aaaa0001',
  n: seq,
  at: 1,
  flow: 'static',
  tx: 'TX-STATIC-1',
  seq,
  item: 12,
  price,
  outcome: 'success',
});

// The messages the machine loop posts for one static vend and one dynamic vend.
const approved = (seq: number): MainToPayment => ({
  type: 'vend.approved',
  txId: 'TX-S',
  vendSeq: seq,
  price: 2.4,
  item: 7,
});
const result = (seq: number, outcome: 'success' | 'failed' | 'reset'): MainToPayment => ({
  type: 'vend.result',
  txId: 'TX-S',
  requestId: null,
  vendSeq: seq,
  outcome,
  detail: null,
});
const dynamicSuccess: MainToPayment = {
  type: 'vend.result',
  txId: 'TX-D',
  requestId: 'vr1-1',
  vendSeq: null,
  outcome: 'success',
  detail: null,
};

test('records read back as written; a torn last record (a kill mid-write) is dropped, not misread', T, () => {
  const one = encodeRecord(staticRecord(1))!;
  const two = encodeRecord(staticRecord(2, 2))!;
  const torn = two.subarray(0, two.length - 5); // no line end: the write was cut short
  const content = parseJournal(Buffer.concat([one, two, torn]));
  assert.deepEqual(content.records, [staticRecord(1), staticRecord(2, 2)]);
  assert.equal(content.torn, 1);
  assert.equal(content.damaged, 0);
});

test('a record with one byte changed fails its checksum and is dropped; the records around it stay', T, () => {
  const lines = [1, 2, 3].map((n) => encodeRecord(staticRecord(n))!);
  const hurt = Buffer.from(lines[1]!);
  hurt[hurt.indexOf('"price":1.5') + 9] = '9'.charCodeAt(0); // 1.5 -> 9.5: a different price, same length
  const content = parseJournal(Buffer.concat([lines[0]!, hurt, lines[2]!]));
  assert.deepEqual(
    content.records.map((r) => (r.flow === 'static' ? r.seq : 0)),
    [1, 3],
  );
  assert.equal(content.damaged, 1);
});

test("a power cut's leftovers: zeros before and after records, garbage lines, an overlong line", T, () => {
  const good = encodeRecord(staticRecord(4))!;
  const bytes = Buffer.concat([
    Buffer.alloc(300), // a hole of zeros (blocks allocated, data never written)
    good,
    Buffer.from('qv1 00000000 {"run":"aaaa0001"}\n'), // the right shape, the wrong checksum
    Buffer.from('not a record at all\n'),
    Buffer.from(`qv1 ${'x'.repeat(MAX_RECORD_BYTES)}\n`), // longer than any record
    Buffer.alloc(100), // zeros at the end: nothing torn
  ]);
  const content = parseJournal(bytes);
  assert.deepEqual(content.records, [staticRecord(4)]);
  assert.equal(content.damaged, 3);
  assert.equal(content.torn, 0);
});

test('a record that passes its checksum but carries a field out of bounds is refused', T, () => {
  // An outcome no reader reports, with a good checksum, is still refused.
  const json = JSON.stringify({ ...staticRecord(1), outcome: 'dispensed' });
  const sum = createHash('sha256').update(json).digest('hex').slice(0, 8);
  const forged = parseJournal(Buffer.from(`qv1 ${sum} ${json}\n`));
  assert.equal(forged.records.length, 0);
  assert.equal(forged.damaged, 1);
  const longTx = encodeRecord({ ...staticRecord(1), tx: 'T'.repeat(600) });
  assert.equal(longTx, null, 'a record over the bound is never written');
});

test('without journaled approvals the writer journals charged results only, with their item and price', T, () => {
  const s = scratch();
  try {
    const w = new VendJournalWriter({ path: s.path, log: keptLog().log, now: () => 42 });
    w.observe(approved(1));
    w.observe(result(1, 'failed'));
    w.observe(approved(2));
    w.observe(result(2, 'reset')); // a reset after the approval is charged (MDB 4.2 7.4.7)
    w.observe(result(3, 'success')); // no approval seen in this run: nothing to record it with
    w.observe(dynamicSuccess);
    w.observe({ type: 'reader.status', status: 'enabled', txId: null });
    const { records } = readJournal(s.path);
    assert.deepEqual(
      records.map((r) => ({ ...r, run: 'R', n: 0 })),
      [
        {
          run: 'R',
          n: 0,
          at: 42,
          tx: 'TX-S',
          kind: 'result',
          outcome: 'reset',
          flow: 'static',
          seq: 2,
          item: 7,
          price: 2.4,
        },
        { run: 'R', n: 0, at: 42, tx: 'TX-D', kind: 'result', outcome: 'success', flow: 'dynamic', req: 'vr1-1' },
      ],
    );
    assert.equal(w.pendingCount, 2);
    w.close();
  } finally {
    s.done();
  }
});

test('an approval is journaled before its write; then its result, whatever it is (it overrules it)', T, () => {
  const s = scratch();
  try {
    const w = new VendJournalWriter({ path: s.path, log: keptLog().log, now: () => 42 });
    // What the machine loop hands over just before C,VEND,<amount> (src/mdb/machine-loop.ts).
    w.approving({ flow: 'static', txId: 'TX-S', vendSeq: 1, item: 7, price: 2.4 });
    w.observe(approved(1));
    assert.deepEqual(
      readJournal(s.path).records.map((r) => ({ ...r, run: 'R' })),
      [{ run: 'R', n: 0, at: 42, tx: 'TX-S', kind: 'approval', flow: 'static', seq: 1, item: 7, price: 2.4 }],
    );
    w.observe(result(1, 'failed')); // kept: without it the next start would charge the approval
    w.approving({ flow: 'dynamic', txId: 'TX-D', requestId: 'vr1-1' });
    w.observe({ ...dynamicSuccess, outcome: 'timeout' });
    w.observe({ ...dynamicSuccess, txId: 'TX-E', outcome: 'expired' }); // never approved: nothing
    const kept = readJournal(s.path).records.map((r) => [r.tx, r.kind, 'outcome' in r ? r.outcome : null]);
    assert.deepEqual(kept, [
      ['TX-S', 'approval', null],
      ['TX-S', 'result', 'failed'],
      ['TX-D', 'approval', null],
      ['TX-D', 'result', 'timeout'],
    ]);
    assert.equal(w.pendingCount, 2);
    w.recorded(['TX-S#1', 'TX-D'], false);
    assert.equal(statSync(s.path).size, 0, 'cut back once the ledger holds both results');
    w.close();
  } finally {
    s.done();
  }
});

test("cut back once every result is recorded, not before; earlier runs' records wait for the take-over", T, () => {
  const s = scratch();
  try {
    writeFileSync(s.path, encodeRecord(staticRecord(1))!); // left by an earlier run
    const w = new VendJournalWriter({ path: s.path, log: keptLog().log });
    w.observe(approved(1));
    w.observe(result(1, 'success'));
    w.observe(dynamicSuccess);
    w.recorded(['TX-S#1'], false);
    assert.equal(readJournal(s.path).records.length, 3, 'TX-D is still pending');
    w.recorded(['TX-D'], false);
    assert.equal(readJournal(s.path).records.length, 3, "the earlier run's record is not taken over yet");
    w.recorded([], true);
    assert.equal(statSync(s.path).size, 0);
    w.observe(approved(2));
    w.observe(result(2, 'success'));
    assert.equal(readJournal(s.path).records.length, 1, 'appends again after the cut');
    w.close();
  } finally {
    s.done();
  }
});

test('at its bound the writer stops appending and raises its alarm, cleared when it takes writes again', T, () => {
  const s = scratch();
  try {
    const { log, lines } = keptLog();
    const alarms: Array<[boolean, string | null]> = [];
    const first: VendJournalRecord = {
      run: 'abcdef01',
      n: 0,
      at: 1,
      kind: 'result',
      flow: 'static',
      tx: 'TX-S',
      seq: 1,
      item: 7,
      price: 2.4,
      outcome: 'success',
    };
    const one = encodeRecord(first)!.length;
    const bound = { maxBytes: one * 2 + 10, now: () => 1 };
    const w = new VendJournalWriter({ path: s.path, log, ...bound, onTrouble: (a, d) => alarms.push([a, d]) });
    for (const seq of [1, 2, 3, 4]) {
      w.observe(approved(seq));
      w.observe(result(seq, 'success'));
    }
    assert.equal(readJournal(s.path).records.length, 2, 'no record past the bound');
    assert.ok(statSync(s.path).size <= one * 2 + 10);
    assert.equal(alarms.length, 1, 'raised once, not per refused record');
    assert.equal(alarms[0]![0], true);
    assert.match(alarms[0]![1]!, /reached its bound/);
    const errors = lines.filter((l) => l.level === 'error');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.fields.code, 'LEDGER_JOURNAL_FAILED');
    w.recorded(['TX-S#1', 'TX-S#2', 'TX-S#3', 'TX-S#4'], true);
    w.observe(approved(5));
    w.observe(result(5, 'success'));
    assert.deepEqual(alarms.at(-1), [false, null]);
    assert.equal(readJournal(s.path).records.length, 1);
    w.close();
  } finally {
    s.done();
  }
});

test('a journal that cannot be opened: the alarm names the file, nothing is thrown (the sale goes on)', T, () => {
  const s = scratch();
  try {
    const alarms: Array<[boolean, string | null]> = [];
    const path = join(s.dir, 'missing-dir', 'ledger.sqlite.vend-journal');
    const w = new VendJournalWriter({ path, log: keptLog().log, onTrouble: (a, d) => alarms.push([a, d]) });
    w.observe(approved(1));
    assert.doesNotThrow(() => w.observe(result(1, 'success')));
    assert.equal(alarms.length, 1);
    assert.ok(alarms[0]![1]!.includes(path));
    w.close();
  } finally {
    s.done();
  }
});

test('a record appended by hand after a torn one is still read (the torn piece ends at the next line end)', T, () => {
  const s = scratch();
  try {
    const good = encodeRecord(staticRecord(1))!;
    writeFileSync(s.path, good.subarray(0, 20));
    appendFileSync(s.path, '\n');
    appendFileSync(s.path, encodeRecord(staticRecord(2))!);
    const content = readJournal(s.path);
    assert.deepEqual(content.records, [staticRecord(2)]);
    assert.equal(content.damaged, 1);
    assert.equal(readFileSync(s.path).length > 0, true);
  } finally {
    s.done();
  }
});
