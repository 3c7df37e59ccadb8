/**
 * The DEX simulator's wire: closing it while a send is still under way ends that send, so the
 * simulated VMC's loop (and the test closing it) never waits on a port that is gone. serialport's
 * drain() on a closed port waits for an 'open' that never comes; this hung a CI run.
 *
 * A write still under way when the port closes must neither reach the closed descriptor (EBADF
 * under load: the write ran on libuv's thread pool after the close) nor surface as an 'error'
 * nobody listens to: either one failed a loaded `npm test` although the file passed alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSync, closeSync } from 'node:fs';
import { Wire } from '../../../src/sim/dex/wire.js';
import { createPtyPair } from '../../support/pty.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

/** Resolves 'ended' when `p` settles, 'still waiting' after 5 s (the test's own deadline stays above). */
function endsSoon(p: Promise<unknown>): Promise<string> {
  const later = new Promise<string>((r) => setTimeout(() => r('still waiting'), 5000).unref());
  return Promise.race([p.then(() => 'ended'), later]);
}

test('a send under way when the wire closes ends with the close', { timeout: TEST_DEADLINE_MS }, async () => {
  const pty = await createPtyPair();
  try {
    for (let i = 0; i < 20; i++) {
      const wire = await Wire.open<never>(pty.vmcPath, 9600, () => []);
      // Closed right after the write was queued: in the window between its callback and drain().
      const sent = wire.send(Buffer.from([0x04]), 0);
      const closed = wire.close();
      assert.equal(await endsSoon(sent), 'ended', `send ${i} never ended after close`);
      await closed;
      assert.equal(wire.isClosed, true);
    }
  } finally {
    await pty.close();
  }
});

test(
  'a write the other end never takes is cut by the close, with no error',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const pty = await createPtyPair();
    // The other end is held open and never read: the relay's buffer and the kernel's fill up, so the
    // write below can never finish and is still under way when the wire closes.
    const reader = openSync(pty.agentPath, 'r');
    const escaped: unknown[] = [];
    const onUncaught = (err: unknown): void => void escaped.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const wire = await Wire.open<never>(pty.vmcPath, 9600, () => []);
      const sent = wire.send(Buffer.alloc(1 << 20, 0x55), 0);
      await new Promise((r) => setImmediate(r)); // the write has left for the binding
      const closed = wire.close();
      assert.equal(await endsSoon(sent), 'ended', 'the send never ended after close');
      assert.equal(await endsSoon(closed), 'ended', 'the close never ended');
      // The cut write's error is emitted (next tick) before the close's own callback: one more turn.
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(
        escaped.map((e) => (e as Error).message),
        [],
        'an error escaped the closed wire',
      );
    } finally {
      process.off('uncaughtException', onUncaught);
      closeSync(reader);
      await pty.close();
    }
  },
);
