/** Framing, the serialport mock binding, the in-memory wire. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SerialPortMock } from 'serialport';
import { LineFramer, MemoryWire, openSerialLink, createMdbTransport } from '../../src/mdb/transport/index.js';
import { isQrvendError } from '../../src/core/errors.js';

function framer(max = 16) {
  const lines: string[] = [];
  let overlong = 0;
  const f = new LineFramer(max, { onLine: (l) => lines.push(l), onOverlong: () => void (overlong += 1) });
  return { f, lines, overlong: () => overlong };
}

test('lines are cut at LF, CR before it dropped, across arbitrary chunking', () => {
  const { f, lines } = framer();
  const bytes = Buffer.from('r,ACK\r\nc,1\r\n\r\nc,SET,OK\n');
  for (let i = 0; i < bytes.length; i += 3) f.push(bytes.subarray(i, i + 3));
  assert.deepEqual(lines, ['r,ACK', 'c,1', '', 'c,SET,OK']);
  assert.equal(f.buffered, 0);
});

test('an overlong line is dropped once, without buffering it, and the next line is intact', () => {
  const { f, lines, overlong } = framer(16);
  f.push(Buffer.from('x'.repeat(10)));
  f.push(Buffer.from('y'.repeat(10))); // now past the cap: dropped here, not at the terminator
  assert.equal(overlong(), 1);
  assert.equal(f.buffered, 0, 'nothing of the overlong line is kept');
  f.push(Buffer.from('z'.repeat(5000)));
  assert.equal(f.buffered, 0);
  f.push(Buffer.from('zzz\r\nr,ACK\r\n'));
  assert.deepEqual(lines, ['r,ACK']);
  assert.equal(overlong(), 1);
});

test('a line of exactly the cap passes (with or without CR); one more byte does not', () => {
  const { f, lines, overlong } = framer(5);
  f.push(Buffer.from('12345\r\n12345\n123456\n'));
  assert.deepEqual(lines, ['12345', '12345']);
  assert.equal(overlong(), 1);
});

test('bytes are decoded one char per byte, so binary noise stays visible as such', () => {
  const { f, lines } = framer();
  f.push(Buffer.from([0xff, 0x41, 0x0a]));
  assert.deepEqual(lines, ['\u00ffA']);
});

test('serialport mock binding: lines written reach the port, data emitted reaches the link', async () => {
  SerialPortMock.binding.createPort('/dev/qrvend-mock0', { echo: false, record: true });
  const link = await openSerialLink({ path: '/dev/qrvend-mock0', baudRate: 115200, mock: true });
  const got: Buffer[] = [];
  link.onData((c) => got.push(c));
  link.write('C,1\r\n');
  const port = (link as unknown as { port: SerialPortMock }).port;
  await new Promise<void>((resolve) => port.drain(() => resolve()));
  assert.equal(port.port?.recording.toString(), 'C,1\r\n');
  port.port?.emitData(Buffer.from('c,1\r\n'));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(Buffer.concat(got).toString(), 'c,1\r\n');
  await link.close();
  SerialPortMock.binding.reset();
});

test('opening a port that does not exist is a SERIAL_OPEN_FAILED with a hint', async () => {
  await assert.rejects(openSerialLink({ path: '/dev/qrvend-does-not-exist', baudRate: 115200 }), (err: unknown) => {
    assert.ok(isQrvendError(err, 'SERIAL_OPEN_FAILED'));
    assert.match(err.message, /qrvend-does-not-exist/);
    assert.ok(err.hint);
    return true;
  });
});

test('memory wire: bytes cross on a later tick, unplug closes the agent end and blocks opens', async () => {
  const wire = new MemoryWire();
  const agent = await wire.openAgent();
  const atVmc: string[] = [];
  const atAgent: string[] = [];
  wire.vmcEnd.onData((c) => atVmc.push(c.toString()));
  agent.onData((c) => atAgent.push(c.toString()));
  let closed = '';
  agent.onClose((r) => (closed = r));
  agent.write('V\r\n');
  assert.deepEqual(atVmc, [], 'not delivered inside the write');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(atVmc, ['V\r\n']);
  wire.vmcEnd.write('v,1,2\r\n');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(atAgent, ['v,1,2\r\n']);
  wire.unplug();
  assert.equal(closed, 'unplugged');
  await assert.rejects(wire.openAgent(), (e: unknown) => isQrvendError(e, 'SERIAL_OPEN_FAILED'));
  wire.replug();
  const again = await wire.openAgent();
  again.write('x');
  await new Promise((r) => setImmediate(r));
  assert.equal(atVmc.at(-1), 'x');
});

test('createMdbTransport: sim gives the wire, a path gives a serial opener', () => {
  const sim = createMdbTransport({ port: 'sim', baudRate: 115200 });
  assert.ok(sim.simWire);
  assert.equal(sim.devicePath, null);
  const dev = createMdbTransport({ port: '/dev/ttyACM0', baudRate: 115200 });
  assert.equal(dev.simWire, null);
  assert.equal(dev.devicePath, '/dev/ttyACM0');
});
