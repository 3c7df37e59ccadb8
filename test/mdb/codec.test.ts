import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import {
  encodeBoardLine,
  encodeCommand,
  parseBoardLine,
  parseCommand,
  toMajor,
  toMinor,
  type BoardCommand,
  type BoardLine,
} from '../../src/mdb/codec/index.js';

const fixture = new URL('../../../test/fixtures/mdb/board-lines.txt', import.meta.url);

test('every annotated board line parses to its kind, or is noise for its reason', () => {
  const rows = readFileSync(fixture, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0 && !l.startsWith('#'))
    .map((l) => l.split('\t') as [string, string]);
  assert.ok(rows.length > 30);
  for (const [expected, text] of rows) {
    const parsed = parseBoardLine(text);
    if (expected.startsWith('noise:')) {
      assert.equal(parsed.ok, false, text);
      if (!parsed.ok) assert.equal(parsed.reason, expected.slice(6), text);
    } else {
      assert.ok(parsed.ok, `${text} should parse`);
      if (parsed.ok) assert.equal(parsed.value.kind, expected, text);
    }
  }
});

test('fields are typed: amounts as numbers, items as integers, vend error codes', () => {
  assert.deepEqual(parseBoardLine('c,STATUS,VEND,1.50,12'), {
    ok: true,
    value: { kind: 'vend-request', price: 1.5, item: 12 },
  });
  assert.deepEqual(parseBoardLine('c,STATUS,IDLE,5.00'), { ok: true, value: { kind: 'session-idle', funds: 5 } });
  assert.deepEqual(parseBoardLine('c,ERR,VEND 5'), { ok: true, value: { kind: 'vend-error', code: 5 } });
  assert.deepEqual(parseBoardLine('v,2.1.0,MDB-42'), {
    ok: true,
    value: { kind: 'version', firmware: '2.1.0', boardId: 'MDB-42' },
  });
});

test('empty and binary lines are their own noise reasons', () => {
  assert.deepEqual(parseBoardLine(''), { ok: false, reason: 'empty', line: '' });
  assert.equal((parseBoardLine('c,STATUS,\u0000ENABLED') as { reason: string }).reason, 'binary');
  assert.equal((parseBoardLine('\u00ffr,ACK') as { reason: string }).reason, 'binary');
});

test('fuzz: any string parses or is noise, never throws', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 300, unit: 'binary' }), (s) => {
      const p = parseBoardLine(s);
      assert.equal(typeof p.ok, 'boolean');
    }),
    { numRuns: 2000, seed: 7 },
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 100 }), (s) => void parseCommand(s)),
    { numRuns: 1000, seed: 8 },
  );
});

test('board lines round-trip through encode and parse', () => {
  const lines: BoardLine[] = [
    { kind: 'version', firmware: '1.2', boardId: 'X1' },
    { kind: 'enable-echo', enabled: true },
    { kind: 'set-ok' },
    { kind: 'status', status: 'ENABLED' },
    { kind: 'session-idle', funds: null },
    { kind: 'session-idle', funds: 2.5 },
    { kind: 'vend-request', price: 0.05, item: 7 },
    { kind: 'vend-success' },
    { kind: 'vend-error', code: 3 },
    { kind: 'error', text: 'START -3' },
    { kind: 'poll' },
  ];
  for (const l of lines) assert.deepEqual(parseBoardLine(encodeBoardLine(l, 2)), { ok: true, value: l });
});

test('commands encode with the machine decimals and parse back (the simulator side)', () => {
  const cmds: Array<[BoardCommand, string]> = [
    [{ kind: 'version' }, 'V'],
    [{ kind: 'enable', enabled: false }, 'C,0'],
    [{ kind: 'enable', enabled: true }, 'C,1'],
    [{ kind: 'setconf', key: 'mdb-always-idle', value: '1' }, 'C,SETCONF,mdb-always-idle=1'],
    [{ kind: 'start', funds: 5 }, 'C,START,5.00'],
    [{ kind: 'vend-approve', amount: 1.5 }, 'C,VEND,1.50'],
    [{ kind: 'vend-deny' }, 'C,VEND,-1'],
    [{ kind: 'stop' }, 'C,STOP'],
  ];
  for (const [cmd, text] of cmds) {
    assert.equal(encodeCommand(cmd, 2), text);
    assert.deepEqual(parseCommand(text), { ok: true, value: cmd });
  }
  assert.equal(encodeCommand({ kind: 'start', funds: 5 }, 0), 'C,START,5');
  assert.equal(parseCommand('C,VEND,abc').ok, false);
  assert.equal(parseCommand('C,SETCONF,novalue').ok, false);
});

test('minor units are exact where floats are not', () => {
  assert.equal(toMinor(0.1, 2) + toMinor(0.2, 2), toMinor(0.3, 2));
  assert.equal(toMajor(150, 2), 1.5);
  assert.equal(toMinor(1.005, 3), 1005);
});

test('cash sales: both spellings carry price and item; the encoder writes c,CASHSALE and it parses back', () => {
  assert.deepEqual(parseBoardLine('c,CASHSALE,1.15,12'), {
    ok: true,
    value: { kind: 'cash-sale', price: 1.15, item: 12 },
  });
  assert.deepEqual(parseBoardLine('c,STATUS,CASHSALE,0.29,7'), {
    ok: true,
    value: { kind: 'cash-sale', price: 0.29, item: 7 },
  });
  const line = encodeBoardLine({ kind: 'cash-sale', price: 4.35, item: 21 }, 2);
  assert.equal(line, 'c,CASHSALE,4.35,21');
  assert.deepEqual(parseBoardLine(line), { ok: true, value: { kind: 'cash-sale', price: 4.35, item: 21 } });
});

test("lines of the board's other roles are recognised by kind, not noise", () => {
  assert.deepEqual(parseBoardLine('d,STATUS,IDLE'), {
    ok: true,
    value: { kind: 'ignored', what: 'cashless-master', line: 'd,STATUS,IDLE' },
  });
  assert.deepEqual(parseBoardLine('f,ACK'), {
    ok: true,
    value: { kind: 'ignored', what: 'board-config', line: 'f,ACK' },
  });
  assert.deepEqual(parseBoardLine('c,UNKNOWN," C"'), {
    ok: true,
    value: { kind: 'ignored', what: 'unknown-command', line: 'c,UNKNOWN," C"' },
  });
  assert.equal(parseBoardLine('d').ok, false, 'a bare prefix is no line of any role');
  assert.equal(parseBoardLine('x,ACK').ok, false);
});
