/**
 * The event-loop tty link over a real pty pair: bytes both ways, the device settings that
 * serialport's binding applies, the exclusive lock, unplug and replug, a clean close, and no
 * partial line glued across a reopen when the link supervisor frames it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  LinkSupervisor,
  createMdbTransport,
  openSerialLink,
  openTtyLink,
  ttyOpener,
  type ByteLink,
} from '../../src/mdb/transport/index.js';
import { isQrvendError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { createPtyPair, type PtyPair } from '../support/pty.js';
import { waitFor } from './support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function collect(link: ByteLink): { text: () => string; closes: string[] } {
  const chunks: Buffer[] = [];
  const closes: string[] = [];
  link.onData((c) => chunks.push(c));
  link.onClose((r) => closes.push(r));
  return { text: () => Buffer.concat(chunks).toString('latin1'), closes };
}

async function withPty(body: (pty: PtyPair) => Promise<void>): Promise<void> {
  const pty = await createPtyPair();
  try {
    await body(pty);
  } finally {
    await pty.close();
  }
}

test('bytes cross both ways; the other end is any serial reader', T, () =>
  withPty(async (pty) => {
    const agent = await openTtyLink({ path: pty.agentPath, baudRate: 115200 });
    const vmc = await openSerialLink({ path: pty.vmcPath, baudRate: 115200 });
    const atAgent = collect(agent);
    const atVmc = collect(vmc);
    try {
      agent.write('C,1\r\n');
      agent.write(Buffer.from('C,SETCONF,mdb-addr=0x10\r\n'));
      await waitFor('lines at the VMC end', () => atVmc.text() === 'C,1\r\nC,SETCONF,mdb-addr=0x10\r\n');
      // Every byte value survives (raw mode: no CR/LF translation, no echo, no signals).
      const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      vmc.write(all);
      await waitFor('256 bytes at the agent', () => atAgent.text().length === 256);
      assert.deepEqual(Buffer.from(atAgent.text(), 'latin1'), all);
      await agent.drain();
      assert.deepEqual(atAgent.closes, []);
    } finally {
      await agent.close();
      await vmc.close();
    }
  }),
);

test("the device is configured by serialport's binding: baud rate, raw mode", T, () =>
  withPty(async (pty) => {
    const agent = await openTtyLink({ path: pty.agentPath, baudRate: 57600 });
    try {
      const settings = execFileSync('stty', ['-F', pty.agentPath, '-a'], { encoding: 'utf8' });
      assert.match(settings, /speed 57600 baud/);
      for (const flag of ['-icanon', '-echo', '-isig', '-opost', '-icrnl'])
        assert.ok(settings.split(/\s+/).includes(flag), `${flag} in ${settings}`);
    } finally {
      await agent.close();
    }
  }),
);

test('a second open of a port in use is refused (the lock is held while the link is open)', T, () =>
  withPty(async (pty) => {
    const first = await openTtyLink({ path: pty.agentPath, baudRate: 115200 });
    await assert.rejects(openTtyLink({ path: pty.agentPath, baudRate: 115200 }), (err: unknown) =>
      isQrvendError(err, 'SERIAL_OPEN_FAILED'),
    );
    await first.close();
    const again = await openTtyLink({ path: pty.agentPath, baudRate: 115200 });
    await again.close();
  }),
);

test('opening a port that does not exist is a SERIAL_OPEN_FAILED naming it, with a hint', T, async () => {
  await assert.rejects(openTtyLink({ path: '/dev/qrvend-does-not-exist', baudRate: 115200 }), (err: unknown) => {
    assert.ok(isQrvendError(err, 'SERIAL_OPEN_FAILED'));
    assert.match(err.message, /qrvend-does-not-exist/);
    assert.ok(err.hint);
    return true;
  });
});

test('unplug: the link reports its end once, writes after it are dropped quietly, reopen works after replug', T, () =>
  withPty(async (pty) => {
    const agent = await openTtyLink({ path: pty.agentPath, baudRate: 115200 });
    const seen = collect(agent);
    await pty.unplug();
    await waitFor('close reported', () => seen.closes.length > 0, 5000);
    assert.equal(seen.closes.length, 1);
    assert.match(seen.closes[0]!, /closed|error|write failed/);
    assert.doesNotThrow(() => agent.write('C,0\r\n'));
    await agent.close(); // after the device went away: still clean
    await assert.rejects(openTtyLink({ path: pty.agentPath, baudRate: 115200 }), (err: unknown) =>
      isQrvendError(err, 'SERIAL_OPEN_FAILED'),
    );
    await pty.replug();
    const back = await openTtyLink({ path: pty.agentPath, baudRate: 115200 });
    const vmc = await openSerialLink({ path: pty.vmcPath, baudRate: 115200 });
    const atBack = collect(back);
    vmc.write('r,ACK\r\n');
    await waitFor('line after replug', () => atBack.text() === 'r,ACK\r\n');
    assert.deepEqual(seen.closes.length, 1, 'the old link stays quiet');
    await back.close();
    await vmc.close();
  }),
);

test('a write that fails ends the link with the reason', T, () =>
  withPty(async (pty) => {
    const agent = await openTtyLink({ path: pty.agentPath, baudRate: 115200 });
    const seen = collect(agent);
    // Destroy the byte stream behind the link's back: the next write fails as on a dead device.
    (agent as unknown as { stream: { destroy(): void } }).stream.destroy();
    agent.write('C,1\r\n');
    await waitFor('close reported', () => seen.closes.length > 0);
    assert.equal(seen.closes.length, 1);
    assert.match(seen.closes[0]!, /write failed/);
    await agent.close();
  }),
);

test('close() is clean: no close event, twice is fine, the last line reaches the other end first', T, () =>
  withPty(async (pty) => {
    const vmc = await openSerialLink({ path: pty.vmcPath, baudRate: 115200 });
    const atVmc = collect(vmc);
    const agent = await openTtyLink({ path: pty.agentPath, baudRate: 115200 });
    const seen = collect(agent);
    agent.write('C,0\r\n');
    await Promise.all([agent.close(), agent.close()]);
    await waitFor('C,0 at the VMC end', () => atVmc.text() === 'C,0\r\n');
    assert.deepEqual(seen.closes, []);
    assert.doesNotThrow(() => agent.write('late\r\n'));
    await vmc.close();
  }),
);

test('supervised: a partial line before an unplug is not glued to the first line after the replug', T, () =>
  withPty(async (pty) => {
    const lines: string[] = [];
    let ups = 0;
    let downs = 0;
    const sup = new LinkSupervisor({
      open: ttyOpener({ path: pty.agentPath, baudRate: 115200 }),
      devicePath: pty.agentPath,
      maxLineLength: 64,
      linkWatchdogMs: 5000,
      reopenMinMs: 20,
      reopenMaxMs: 100,
      log: silentLogger(),
      onUp: () => void (ups += 1),
      onDown: () => void (downs += 1),
      onLine: (l) => void lines.push(l),
      onOverlong: () => {},
      onSilent: () => {},
    });
    let vmc = await openSerialLink({ path: pty.vmcPath, baudRate: 115200 });
    try {
      sup.start();
      await waitFor('up', () => ups === 1);
      vmc.write('r,ACK\r\nc,STATUS,VE');
      await waitFor('first line', () => lines.length === 1);
      await vmc.drain();
      await vmc.close();
      await pty.unplug();
      await waitFor('down', () => downs === 1, 5000);
      await pty.replug();
      vmc = await openSerialLink({ path: pty.vmcPath, baudRate: 115200 });
      await waitFor('up again', () => ups === 2, 5000);
      vmc.write('ND,1.00,3\r\n');
      vmc.write('c,1\r\n');
      await waitFor('lines after replug', () => lines.length === 3);
      assert.deepEqual(lines, ['r,ACK', 'ND,1.00,3', 'c,1']);
      assert.equal(sup.stats().reopens, 1);
    } finally {
      await sup.stop();
      await vmc.close();
    }
  }),
);

test('createMdbTransport on Linux opens a device path with the tty link', T, () =>
  withPty(async (pty) => {
    const transport = createMdbTransport({ port: pty.agentPath, baudRate: 115200 });
    const link = await transport.open();
    try {
      if (process.platform === 'linux') assert.equal(link.constructor.name, 'TtyLink');
      assert.equal(link.description, pty.agentPath);
    } finally {
      await link.close();
    }
  }),
);
