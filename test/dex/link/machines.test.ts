/**
 * The protocol machines step by step, without a port or a clock: frames against the standard's
 * own examples, and the timers fed in by hand.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ddcmp, DATA_ATTEMPTS, START_ATTEMPTS, type DdcmpState } from '../../../src/dex/link/ddcmp.js';
import { control, dataMessage, scanDdcmp, DDCMP_HUNT, ACK, STACK } from '../../../src/dex/link/ddcmp-frames.js';
import { dexUcs, ENQ_ATTEMPTS, type UcsState } from '../../../src/dex/link/dex-ucs.js';
import { ACK0, ACK1, encodeBlock, EOT, ENQ, NAK, scanUcs, SCAN_IDLE, WACK } from '../../../src/dex/link/ucs-frames.js';
import type { LinkEffect, LinkInput, LinkMachine } from '../../../src/dex/link/machine.js';

function run<S>(m: LinkMachine<S>, inputs: LinkInput[], max = 65536): { state: S; effects: LinkEffect[] } {
  let state = m.initial(max);
  const effects: LinkEffect[] = [];
  for (const input of inputs) {
    const r = m.step(state, input);
    state = r.state;
    effects.push(...r.effects);
  }
  return { state, effects };
}
const begin: LinkInput = { kind: 'begin', now: new Date(Date.UTC(2002, 5, 20, 12, 34, 56)) };
const bytes = (...parts: (Buffer | number)[]): LinkInput => ({
  kind: 'bytes',
  bytes: Buffer.concat(parts.map((p) => (typeof p === 'number' ? Buffer.from([p]) : p))),
});
const timeout: LinkInput = { kind: 'timeout' };
const sent = (effects: LinkEffect[]): Buffer[] => effects.flatMap((e) => (e.kind === 'send' ? [e.bytes] : []));
const last = (effects: LinkEffect[]): LinkEffect | undefined => effects[effects.length - 1];

test('DDCMP frames: the Finish command with its header is byte for byte application note 6.2.1', () => {
  // "81 02 40 05 03 01 A3 20 77 FF 67 B0": rr 5, tx 3, address 1.
  assert.equal(dataMessage(Buffer.from([0x77, 0xff]), 5, 3).toString('hex'), '8102400503' + '01a32077ff67b0');
  const { events } = scanDdcmp(DDCMP_HUNT, Buffer.from('810240050301a32077ff67b0', 'hex'));
  assert.deepEqual(events, [
    { kind: 'data', rr: 5, tx: 3, select: false, payload: Buffer.from([0x77, 0xff]), crcOk: true },
  ]);
});

test('DDCMP scanner: a frame cut short does not keep the following frames out of step', () => {
  const stack = control(STACK, 6, 6);
  // Three bytes of a lost frame, then two whole STACKs.
  const { events } = scanDdcmp(DDCMP_HUNT, Buffer.concat([Buffer.from([0x05, 0x07, 0x40]), stack, stack]));
  assert.equal(events.filter((e) => e.kind === 'control').length, 2);
});

test('DEX/UCS blocks: CRC over the text and ETX, low byte first, the DLEs left out; a damaged one is seen', () => {
  const block = encodeBlock('stx', Buffer.from('DXS*X\r\n'), true);
  assert.deepEqual(scanUcs(SCAN_IDLE, block).events, [
    { kind: 'block', start: 'stx', text: Buffer.from('DXS*X\r\n'), last: true, crcOk: true },
  ]);
  const bad = Buffer.from(block);
  bad[bad.length - 2]! ^= 1;
  assert.equal((scanUcs(SCAN_IDLE, bad).events[0] as { crcOk: boolean }).crcOk, false);
  // Split anywhere, the same block comes out.
  const a = scanUcs(SCAN_IDLE, block.subarray(0, 5));
  assert.deepEqual(scanUcs(a.scan, block.subarray(5)).events, scanUcs(SCAN_IDLE, block).events);
});

test('DEX/UCS: unanswered ENQs are repeated on timer A, then DEX_NO_ANSWER', () => {
  const inputs: LinkInput[] = [begin, ...Array.from({ length: ENQ_ATTEMPTS }, () => timeout)];
  const { effects } = run(dexUcs, inputs);
  assert.equal(sent(effects).filter((b) => b.equals(Buffer.from([ENQ]))).length, ENQ_ATTEMPTS);
  assert.deepEqual(last(effects), {
    kind: 'fail',
    code: 'DEX_NO_ANSWER',
    message: `the VMC did not answer ${ENQ_ATTEMPTS} DEX/UCS ENQs`,
    hint: (last(effects) as { hint: string }).hint,
  });
});

test(
  'DEX/UCS: a whole session as the first-handshake master, answers ' +
    'alternating DLE 1 / DLE 0, a WACK waits, a damaged block is NAKed',
  () => {
    const block1 = encodeBlock('stx', Buffer.from('ST*001*0001\r\n'), false);
    const block2 = encodeBlock('stx', Buffer.from('SE*2*0001\r\n'), true);
    const damaged = Buffer.from(block2);
    damaged[damaged.length - 1]! ^= 0xff;
    const { state, effects } = run(dexUcs, [
      begin,
      bytes(WACK),
      bytes(ACK0),
      bytes(ACK1),
      bytes(ENQ), // second handshake: the VMC leads
      bytes(encodeBlock('soh', Buffer.from('SIM765432100R00L06'), true)),
      bytes(EOT),
      bytes(ENQ), // data
      bytes(block1),
      bytes(damaged),
      bytes(block2),
      bytes(EOT),
    ]);
    const out = sent(effects).map((b) => b.toString('hex'));
    assert.deepEqual(out, [
      '05', // ENQ
      '05', // ENQ again after the WACK
      encodeBlock('soh', Buffer.from('QRV0000001RR00L06'), true).toString('hex'),
      '04', // EOT
      ACK0.toString('hex'),
      ACK1.toString('hex'),
      ACK0.toString('hex'),
      ACK1.toString('hex'), // block 1
      NAK.toString(16).padStart(2, '0'),
      ACK0.toString('hex'), // block 2
    ]);
    assert.deepEqual(last(effects), { kind: 'done', file: Buffer.from('ST*001*0001\r\nSE*2*0001\r\n') });
    assert.equal((state as UcsState).phase, 'over');
  },
);

test('DEX/UCS: a VMC that sends its own ENQ leads the first handshake, and we lead the second', () => {
  const { effects } = run(dexUcs, [
    begin,
    bytes(ENQ),
    bytes(encodeBlock('soh', Buffer.from('SIM7654321SR00L06'), true)),
    bytes(EOT),
    bytes(ACK0),
  ]);
  const out = sent(effects);
  assert.deepEqual(out.slice(1, 4), [ACK0, ACK1, Buffer.from([ENQ])]);
  assert.equal(out[4]!.toString('latin1').slice(2, 20), 'QRV000000100R00L06');
});

test('DEX/UCS: a refusal in the second handshake (code 04, no data) ends with DEX_NO_ANSWER naming it', () => {
  const { effects } = run(dexUcs, [
    begin,
    bytes(ACK0),
    bytes(ACK1),
    bytes(ENQ),
    bytes(encodeBlock('soh', Buffer.from('SIM765432104R00L06'), true)),
  ]);
  const f = last(effects) as { kind: string; code: string; message: string };
  assert.equal(f.code, 'DEX_NO_ANSWER');
  assert.match(f.message, /"04" \(no data to transfer\)/);
});

/** Our ENQ answered, our request acknowledged, the VMC's ENQ for the second handshake, then its response block. */
function secondHandshake(response: string): LinkInput[] {
  const block = encodeBlock('soh', Buffer.from(response, 'latin1'), true);
  return [begin, bytes(ACK0), bytes(ACK1), bytes(ENQ), bytes(block)];
}
const failure = (effects: LinkEffect[]) =>
  effects.find((e) => e.kind === 'fail') as { code: string; message: string } | undefined;

test("DEX/UCS response block read by its fields: a refusal is the VMC's refusal whatever its communication ID", () => {
  // 4.5.3 order (code, ID, revision) and 4.7 order (ID, code, revision); IDs that end or start in 00.
  for (const response of ['04ABC1234500R00L06', 'ABC123450004R00L06', '04ABC0012300R01L01', 'ABC001234504R00L06']) {
    const f = failure(run(dexUcs, secondHandshake(response)).effects);
    assert.equal(f?.code, 'DEX_NO_ANSWER', response);
    assert.match(f!.message, /the VMC refused the audit read: response code "04" \(no data to transfer\)/, response);
  }
  const refusal = failure(run(dexUcs, secondHandshake('ABC120000003R01L01')).effects);
  assert.match(refusal!.message, /"03" \(operation conflict, try again\)/);
});

test('DEX/UCS response block: code 00 goes on to the data whatever the ID, in either order', () => {
  for (const response of ['00ABC1234504R00L06', 'ABC123450400R00L06', '00ABC0012345R00L06', 'QRS765432100R00L06']) {
    const end: { state: UcsState; effects: LinkEffect[] } = run(dexUcs, [...secondHandshake(response), bytes(EOT)]);
    assert.equal(failure(end.effects), undefined, response);
    assert.equal(end.state.phase, 'data-enq', response);
  }
});

test('DEX/UCS response: an all-digit ID that makes the code ambiguous goes on; silence after it is the refusal', () => {
  // "04" + 1234567800 or 0412345678 + "00"; 0012345678 + "04" or "00" + 1234567804: both readings fit
  // 4.5.4's ten-digit IDs.
  for (const response of ['041234567800R00L06', '001234567804R00L06']) {
    const inputs = [...secondHandshake(response), bytes(EOT), timeout];
    const end: { state: UcsState; effects: LinkEffect[] } = run(dexUcs, inputs);
    const f = failure(end.effects);
    assert.equal(f?.code, 'DEX_NO_ANSWER', response);
    assert.match(f!.message, /response code "04" \(no data to transfer\)/, response);
    assert.equal(end.state.phase, 'over');
  }
});

test('DDCMP: STARTs every 250 ms up to the limit, then DEX_NO_ANSWER', () => {
  const { effects } = run(ddcmp, [begin, ...Array.from({ length: START_ATTEMPTS }, () => timeout)]);
  assert.equal(sent(effects).length, START_ATTEMPTS);
  assert.ok(effects.filter((e) => e.kind === 'timer').every((e) => (e as { ms: number }).ms === 250));
  assert.equal((last(effects) as { code: string }).code, 'DEX_NO_ANSWER');
});

test(
  "DDCMP: the rate is the lower of ours and the slave's, set " +
    'before a second START; Who Are You carries the date in BCD',
  () => {
    const { effects } = run(ddcmp, [begin, bytes(control(STACK, 4, 8)), bytes(control(STACK, 4, 0))]);
    const baud = effects.find((e) => e.kind === 'baud');
    assert.deepEqual(baud, { kind: 'baud', rate: 9600 });
    const way = sent(effects)[2]!;
    // header (8), then 77 E0 00, codes 0, date 20 06 02, time 12 34 56.
    assert.equal(way.subarray(8, 21).toString('hex'), '77e0000000000020060212345' + '6');
  },
);

test('DDCMP: a damaged data message is NACKed; after the limit the read ends with DEX_CRC', () => {
  let s = run(ddcmp, [begin, bytes(control(STACK, 0, 0))]).state as DdcmpState; // stays at 2400, WAY sent (tx 1)
  const step = (i: LinkInput) => {
    const r = ddcmp.step(s, i);
    s = r.state;
    return r.effects;
  };
  step(bytes(control(ACK, 1, 0)));
  const bad = dataMessage(Buffer.from([0x88, 0xe0, 0x01]), 1, 1);
  bad[bad.length - 1]! ^= 1;
  const effects: LinkEffect[] = [];
  for (let i = 0; i < DATA_ATTEMPTS; i++) effects.push(...step(bytes(bad)));
  assert.equal(sent(effects).filter((b) => b[1] === 0x02).length, DATA_ATTEMPTS);
  assert.equal((last(effects) as { code: string }).code, 'DEX_CRC');
});

test('DDCMP: Read Data announcing more than dex.maxFileBytes ends with DEX_TOO_LARGE before any data', () => {
  let s = run(ddcmp, [begin, bytes(control(STACK, 0, 0)), bytes(control(ACK, 1, 0))], 100).state;
  const r1 = ddcmp.step(s, bytes(dataMessage(Buffer.from([0x88, 0xe0, 0x01]), 1, 1)));
  s = r1.state;
  s = ddcmp.step(s, bytes(control(ACK, 2, 0))).state;
  const r = ddcmp.step(s, bytes(dataMessage(Buffer.from([0x88, 0xe2, 0x01, 1, 1, 0, 0, 0x00, 0x10]), 2, 2)));
  assert.equal((last(r.effects) as { code: string }).code, 'DEX_TOO_LARGE');
});

test('DDCMP: a file of unknown length (FFFF) ends at the data message with the select flag, then Finish', () => {
  let s = run(ddcmp, [begin, bytes(control(STACK, 0, 0)), bytes(control(ACK, 1, 0))]).state;
  const feed = (i: LinkInput) => {
    const r = ddcmp.step(s, i);
    s = r.state;
    return r.effects;
  };
  feed(bytes(dataMessage(Buffer.from([0x88, 0xe0, 0x01]), 1, 1)));
  feed(bytes(control(ACK, 2, 0)));
  feed(bytes(dataMessage(Buffer.from([0x88, 0xe2, 0x01, 1, 1, 0, 0, 0xff, 0xff]), 2, 2)));
  feed(bytes(dataMessage(Buffer.from([0x99, 0x00, 0x41, 0x42]), 2, 3)));
  const effects = feed(bytes(dataMessage(Buffer.from([0x99, 0x01, 0x43]), 2, 4, true)));
  assert.deepEqual(sent(effects)[1]!.subarray(8, 10), Buffer.from([0x77, 0xff]));
  assert.deepEqual(last(ddcmp.step(s, bytes(control(ACK, 3, 0))).effects), { kind: 'done', file: Buffer.from('ABC') });
});

test('DDCMP: a slave asking for one extra Read Data in its Who Are You answer gets it; the file is both parts', () => {
  let s = run(ddcmp, [begin, bytes(control(STACK, 0, 0)), bytes(control(ACK, 1, 0))]).state;
  const feed = (i: LinkInput) => {
    const r = ddcmp.step(s, i);
    s = r.state;
    return r.effects;
  };
  const way = Buffer.concat([
    Buffer.from([0x88, 0xe0, 0x01, 0, 0, 0, 0]),
    Buffer.from('00012345'),
    Buffer.from([1, 1, /* rd */ 1, 0, 0, 0]),
  ]);
  feed(bytes(dataMessage(way, 1, 1)));
  feed(bytes(control(ACK, 2, 0)));
  feed(bytes(dataMessage(Buffer.from([0x88, 0xe2, 0x01, 1, 1, 0, 0, 2, 0]), 2, 2)));
  const afterFirst = feed(bytes(dataMessage(Buffer.from([0x99, 0x00, 0x41, 0x42]), 2, 3)));
  assert.deepEqual(sent(afterFirst)[1]!.subarray(8, 10), Buffer.from([0x77, 0xe2]), 'a second Read Data, not Finish');
  feed(bytes(control(ACK, 3, 0)));
  feed(bytes(dataMessage(Buffer.from([0x88, 0xe2, 0x01, 1, 1, 0, 0, 2, 0]), 3, 4)));
  // The second read's length counts from its own start: one byte in, it is not over.
  assert.equal(sent(feed(bytes(dataMessage(Buffer.from([0x99, 0x00, 0x43]), 3, 5)))).length, 1, 'only the ACK');
  const afterSecond = feed(bytes(dataMessage(Buffer.from([0x99, 0x01, 0x44]), 3, 6)));
  assert.deepEqual(sent(afterSecond)[1]!.subarray(8, 10), Buffer.from([0x77, 0xff]), 'then Finish');
  assert.deepEqual(last(ddcmp.step(s, bytes(control(ACK, 4, 0))).effects), { kind: 'done', file: Buffer.from('ABCD') });
});
