/**
 * The audit file check and parser over the annotated fixtures (test/fixtures/dex/README.md) and
 * over files built here to break one rule at a time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { examineAuditFile } from '../../../src/dex/file/index.js';
import { crc16 } from '../../../src/dex/crc16.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const fixture = (name: string) => readFileSync(new URL(`../../../../test/fixtures/dex/${name}`, import.meta.url));

/** A one-set file with a correct G85 (or the one given), CRLF line ends. */
function build(body: string[], opts: { version?: string; g85?: string; se?: number } = {}): Buffer {
  const set = `ST*001*0001\r\n${body.map((l) => `${l}\r\n`).join('')}`;
  const g85 = opts.g85 ?? crc16(Buffer.from(set, 'latin1')).toString(16).toUpperCase().padStart(4, '0');
  return Buffer.from(
    `DXS*XYZ1234567*VA*${opts.version ?? 'V0/6'}*1\r\n${set}G85*${g85}` +
      `\r\nSE*${opts.se ?? body.length + 3}*0001\r\nDXE*1*1\r\n`,
    'latin1',
  );
}

test('vmc-a1.dex: check passes and every modelled figure is read from its element', () => {
  const file = examineAuditFile(fixture('vmc-a1.dex'));
  assert.equal(file.check.ok, true);
  assert.deepEqual(file.check.g85, ['ok']);
  assert.equal(file.reason, null);
  assert.deepEqual(file.preamble, ['XYZ VMC-7 audit dump, firmware 3.12']);
  const a = file.audit!;
  assert.equal(a.version, 'V0/6');
  assert.equal(a.sender, 'XYZ1234567');
  assert.deepEqual(a.machine, {
    serial: 'VM2024001',
    model: 'SNACK-8',
    build: '0',
    location: 'LOBBY 2',
    asset: 'A-1002',
  });
  assert.deepEqual(a.currency, { decimals: 2, numeric: '978', alpha: 'EUR' });
  assert.deepEqual(a.paid, { sinceInit: { value: 155400, count: 1032 }, sinceReset: { value: 1810, count: 13 } });
  assert.deepEqual(a.cash.sales, { sinceInit: { value: 50600, count: 335 }, sinceReset: { value: 510, count: 4 } });
  assert.deepEqual(a.cash.out, { sinceReset: 500, manualSinceReset: null, sinceInit: 9000, manualSinceInit: 0 });
  assert.equal(a.cash.in!.sinceInit, 59600);
  assert.deepEqual(a.cashless1, { sinceInit: { value: 74400, count: 497 }, sinceReset: { value: 980, count: 7 } });
  assert.deepEqual(a.cashless2, { sinceInit: { value: 30400, count: 200 }, sinceReset: { value: 320, count: 2 } });
  assert.deepEqual(a.test!.sinceInit, { value: 300, count: 2 });
  assert.deepEqual(a.free!.sinceInit, { value: 0, count: 0 });
  assert.equal(a.products.length, 3);
  const cola = a.products[0]!;
  assert.equal(cola.selection, '11');
  assert.equal(cola.price, 120);
  assert.equal(cola.productId, 'COLA33');
  assert.deepEqual(cola.paid, { sinceInit: { count: 400, value: 48000 }, sinceReset: { count: 8, value: 960 } });
  assert.deepEqual(
    cola.byDevice.map((d) => [
      d.device,
      d.priceList,
      d.price,
      d.totals.sinceInit.count,
      d.totals.sinceInit.value,
      d.totals.sinceReset.count,
      d.totals.sinceReset.value,
    ]),
    [
      ['CA', 0, 120, 130, 15600, 3, 360],
      ['DA', 0, 120, 200, 24000, 4, 480],
      ['DB', 0, 120, 70, 8400, 1, 120],
    ],
  );
  assert.deepEqual(a.events, [
    {
      record: 'EA1',
      id: 'EGS',
      date: '261125',
      time: '0712',
      durationMin: 3,
      sinceReset: null,
      sinceInit: null,
      active: null,
    },
    { record: 'EA2', id: 'EGS', date: null, time: null, durationMin: 3, sinceReset: 1, sinceInit: 4, active: false },
    { record: 'EA2', id: 'EJD', date: null, time: null, durationMin: null, sinceReset: 0, sinceInit: 2, active: true },
  ]);
  assert.deepEqual(a.reads, { withReset: 5, date: '261125', time: '0500', total: 16, resets: 5 });
  // Unknown and unmodelled segments stay exactly as written.
  assert.deepEqual(a.other, [
    { line: 6, text: 'CB1*CB778899*VMC-7*0312' },
    { line: 13, text: 'DA1*CL1-0042*QRV*100' },
    { line: 35, text: 'MA5*XYZ*FLAGS*07' },
  ]);
  assert.deepEqual(a.warnings, []);
});

test('the fixtures agree with themselves: VA1 = CA2 + DA2 + DB2 and each PA2 = its PA7 lines', () => {
  for (const name of ['vmc-a1.dex', 'vmc-a2.dex', 'vmc-a3-reset-on-read.dex', 'vmc-a4-board-swap.dex']) {
    const a = examineAuditFile(fixture(name)).audit!;
    assert.equal(
      a.paid!.sinceInit.count,
      a.cash.sales!.sinceInit.count! + a.cashless1!.sinceInit.count! + a.cashless2!.sinceInit.count!,
      name,
    );
    for (const p of a.products)
      assert.equal(
        p.paid!.sinceInit.count,
        p.byDevice.reduce((s, d) => s + d.totals.sinceInit.count!, 0),
        `${name} ${p.selection}`,
      );
  }
});

test(
  'bad-g85.dex: one altered digit fails the G85 check, names ' +
    'both values, and the file is still parsed for the record',
  () => {
    const file = examineAuditFile(fixture('bad-g85.dex'));
    assert.equal(file.check.ok, false);
    assert.deepEqual(file.check.g85, ['mismatch']);
    const issue = file.check.issues.find((i) => i.code === 'g85-mismatch')!;
    assert.equal(issue.line, 35);
    assert.match(issue.message, /G85 says [0-9A-F]{4}, the data from line 2 computes [0-9A-F]{4}/);
    assert.equal(file.reason, issue.message);
    assert.equal(file.audit!.machine.serial, 'VM2024001');
  },
);

test('a pre-6.0 file may carry its G85 byte-swapped; a 6.0 file may not', () => {
  const old = examineAuditFile(fixture('old-v11-swapped-g85.dex'));
  assert.equal(old.check.ok, true);
  assert.deepEqual(old.check.g85, ['swapped']);
  // The same bytes declared V0/6: the swapped order is an error there.
  const modern = examineAuditFile(
    Buffer.from(fixture('old-v11-swapped-g85.dex').toString('latin1').replace('V1/1', 'V0/6'), 'latin1'),
  );
  assert.equal(modern.check.ok, false);
  assert.deepEqual(modern.check.g85, ['mismatch']);
});

test('the G85 covers ST to the line before G85 and nothing else: DXS and vendor lines may change', () => {
  const body = ['ID1*S1', 'VA1*100*1'];
  const file = build(body);
  assert.equal(examineAuditFile(file).check.ok, true);
  const otherSender = Buffer.from(file.toString('latin1').replace('XYZ1234567', 'ABC7654321'), 'latin1');
  assert.equal(examineAuditFile(otherSender).check.ok, true);
  const changed = Buffer.from(file.toString('latin1').replace('VA1*100*1', 'VA1*900*1'), 'latin1');
  assert.deepEqual(examineAuditFile(changed).check.g85, ['mismatch']);
});

test('truncated.dex: a file cut short fails with no SE and no DXE', () => {
  const file = examineAuditFile(fixture('truncated.dex'));
  assert.equal(file.check.ok, false);
  assert.deepEqual(
    file.check.issues
      .filter((i) => i.severity === 'error')
      .map((i) => i.code)
      .sort(),
    ['no-dxe', 'no-se'],
  );
  assert.match(file.reason!, /cut short/);
});

test('SE must count the segments from ST to SE inclusive, or differ by a known convention', () => {
  const body = ['ID1*S1', 'VA1*100*1'];
  assert.equal(examineAuditFile(build(body, { se: 5 })).check.ok, true);
  const wrong = examineAuditFile(build(body, { se: 8 }));
  assert.equal(wrong.check.ok, false);
  const issue = wrong.check.issues.find((i) => i.code === 'se-count')!;
  assert.match(issue.message, /SE says 8 segments, the set from line 2 has 5/);
});

test('an SE count one more than ST to SE (the DXS counted too) is a warning naming it when G85 proves the set', () => {
  const file = examineAuditFile(build(['ID1*S1', 'VA1*100*1'], { se: 6 }));
  assert.equal(file.check.ok, true);
  assert.deepEqual(file.check.g85, ['ok']);
  const issue = file.check.issues.find((i) => i.code === 'se-convention')!;
  assert.equal(issue.severity, 'warning');
  assert.equal(issue.line, 6);
  assert.match(issue.message, /SE says 6 segments, the set from line 2 has 5: counted from DXS/);
});

test('an SE count one less than ST to SE (SE or ST left out) is a warning naming it when G85 proves the set', () => {
  const file = examineAuditFile(build(['ID1*S1', 'VA1*100*1'], { se: 4 }));
  assert.equal(file.check.ok, true);
  const issue = file.check.issues.find((i) => i.code === 'se-convention')!;
  assert.match(issue.message, /SE says 4 .* has 5: .*ST or SE not counted/);
});

test('an SE count that fits a convention is still an error without a G85, or with a G85 that does not match', () => {
  const lines = ['DXS*XYZ1234567*VA*V1/1*1', 'ST*001*0001', 'VA1*100*1', 'SE*4*0001', 'DXE*1*1'];
  const noG85 = Buffer.from(lines.map((l) => `${l}\r\n`).join(''), 'latin1');
  const unproven = examineAuditFile(noG85);
  assert.equal(unproven.check.ok, false);
  assert.match(unproven.reason!, /SE says 4 segments, the set from line 2 has 3.*no matching G85/);
  const damaged = examineAuditFile(build(['ID1*S1', 'VA1*100*1'], { se: 6, g85: '0000' }));
  const errors = damaged.check.issues.filter((i) => i.severity === 'error').map((i) => i.code);
  assert.deepEqual(errors.sort(), ['g85-mismatch', 'se-count']);
});

test("a capture tool's header on the DXS line: the DXS is found after it, and the check says what was skipped", () => {
  const header = Buffer.from('2026-11-25 05:00:03 DEXcap 2.1 #17: ');
  const file = examineAuditFile(Buffer.concat([header, build(['ID1*S7', 'VA1*250*2'])]));
  assert.equal(file.check.ok, true);
  assert.deepEqual(file.check.g85, ['ok']);
  assert.equal(file.audit!.sender, 'XYZ1234567');
  assert.equal(file.audit!.machine.serial, 'S7');
  assert.deepEqual(file.preamble, ['2026-11-25 05:00:03 DEXcap 2.1 #17: ']);
  const issue = file.check.issues.find((i) => i.code === 'dxs-after-header')!;
  assert.equal(issue.severity, 'warning');
  assert.equal(issue.line, 1);
  assert.match(issue.message, /"2026-11-25 05:00:03 DEXcap 2\.1 #17: " \(36 characters\) before DXS on line 1/);
});

test('inside a block, a data segment that mentions DXS* is data, not a new block', () => {
  const file = examineAuditFile(build(['ID1*S1', 'MA5*DXS*X', 'VA1*1*1']));
  assert.equal(file.check.ok, true);
  assert.equal(file.extraBlocks, 0);
  assert.deepEqual(file.audit!.other, [{ line: 4, text: 'MA5*DXS*X' }]);
});

test('a missing G85 is a warning (older machines), a malformed one an error', () => {
  const noG85 = Buffer.from(
    'DXS*XYZ1234567*VA*V1/1*1\r\nST*001*0001\r\nVA1*100*1\r\nSE*3*0001\r\nDXE*1*1\r\n',
    'latin1',
  );
  const file = examineAuditFile(noG85);
  assert.equal(file.check.ok, true);
  assert.deepEqual(file.check.g85, ['missing']);
  assert.equal(file.check.issues[0]!.code, 'g85-missing');
  assert.deepEqual(examineAuditFile(build(['VA1*1*1'], { g85: 'XYZ!' })).check.g85, ['malformed']);
});

test('two-blocks.dex: the block with VA1 is the audit, whichever comes first', () => {
  const file = examineAuditFile(fixture('two-blocks.dex'));
  assert.equal(file.check.ok, true);
  assert.deepEqual(file.check.g85, ['ok', 'ok']);
  assert.equal(file.extraBlocks, 1);
  assert.equal(file.audit!.machine.serial, 'VM2024001');
  assert.equal(file.audit!.cashless1!.sinceInit.count, 509);
});

test('not an audit: empty, no DXS, binary noise: no figures, a reason, no throw', () => {
  assert.equal(examineAuditFile(Buffer.alloc(0)).check.issues[0]!.code, 'empty');
  const noise = examineAuditFile(Buffer.from([0x00, 0xff, 0x1b, 0x5b, 0x32, 0x4a, 0x0d, 0x0a, 0x80]));
  assert.equal(noise.audit, null);
  assert.equal(noise.check.ok, false);
  assert.match(noise.reason!, /no DXS line/);
});

test('empty fields are null, not 0; a non-number is null with a warning naming the element', () => {
  const file = examineAuditFile(build(['VA1*100**7', 'DA2*5A*2']));
  const a = file.audit!;
  assert.deepEqual(a.paid, { sinceInit: { value: 100, count: null }, sinceReset: { value: 7, count: null } });
  assert.deepEqual(a.cashless1!.sinceInit, { value: null, count: 2 });
  assert.deepEqual(a.warnings, ['line 4: DA201 "5A" is not a whole number; read as empty']);
});

test('a file stored with LF line ends: G85 is computed over the lines as transmitted, with CR LF', () => {
  const transmitted = build(['ID1*S9', 'VA1*250*2']);
  assert.equal(examineAuditFile(transmitted).check.g85Over, 'stored-crlf');
  for (const [lineEnds, stored] of [
    ['lf', transmitted.toString('latin1').replaceAll('\r\n', '\n')],
    ['cr', transmitted.toString('latin1').replaceAll('\r\n', '\r')],
    ['mixed', transmitted.toString('latin1').replace('\r\n', '\n')],
  ] as const) {
    const file = examineAuditFile(Buffer.from(stored, 'latin1'));
    assert.equal(file.check.ok, true, lineEnds);
    assert.deepEqual(file.check.g85, ['ok'], lineEnds);
    assert.equal(file.check.lineEnds, lineEnds);
    assert.equal(file.check.g85Over, 'crlf-restored', lineEnds);
    assert.equal(file.audit!.paid!.sinceInit.value, 250);
  }
  // A change in the data still fails, and the message says over which form.
  const lf = transmitted.toString('latin1').replaceAll('\r\n', '\n');
  const altered = examineAuditFile(Buffer.from(lf.replace('250', '950')));
  assert.deepEqual(altered.check.g85, ['mismatch']);
  assert.match(altered.reason!, /computed over the lines with CR LF restored \(the file has LF line ends\)/);
});

test('a second VA1 does not overwrite the first; it is kept under other with a warning', () => {
  const a = examineAuditFile(build(['VA1*100*1', 'VA1*999*9'])).audit!;
  assert.equal(a.paid!.sinceInit.value, 100);
  assert.deepEqual(a.other, [{ line: 4, text: 'VA1*999*9' }]);
});

test(
  'a hostile file of 100,000 PA7 lines over as many selections is read in one pass',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const lines: string[] = [];
    for (let i = 0; i < 100_000; i++) lines.push(`PA7*${i}*DA*0*100*1*100*0*0`);
    const file = examineAuditFile(build(['ID1*BIG', 'VA1*100*1', ...lines]));
    assert.equal(file.check.ok, true);
    assert.equal(file.audit!.products.length, 100_000);
  },
);

test('field-shaped fixtures: header on the DXS line, LF line ends, SE conventions are read, each with its note', () => {
  const cases = [
    ['capture-header-on-dxs-line.dex', 'crlf', ['dxs-after-header']],
    ['lf-line-ends.dex', 'lf', []],
    ['se-counted-from-dxs.dex', 'crlf', ['se-convention']],
    ['capture-lf-se-from-dxs.dex', 'lf', ['dxs-after-header', 'se-convention']],
    ['se-without-st-or-se.dex', 'crlf', ['se-convention']],
  ] as const;
  for (const [name, lineEnds, warnings] of cases) {
    const file = examineAuditFile(fixture(name));
    assert.equal(file.check.ok, true, name);
    assert.deepEqual(file.check.g85, ['ok'], name);
    assert.equal(file.check.lineEnds, lineEnds, name);
    assert.equal(file.check.g85Over, lineEnds === 'lf' ? 'crlf-restored' : 'stored-crlf', name);
    assert.deepEqual(
      file.check.issues.map((i) => i.code),
      warnings,
      name,
    );
    const a = file.audit!;
    assert.equal(a.cashless1!.sinceInit.count, a.paid!.sinceInit.count! - a.cash.sales!.sinceInit.count!, name);
  }
});
