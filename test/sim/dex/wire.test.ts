/**
 * The DEX simulator's wire: closing it while a send is still under way ends that send, so the
 * simulated VMC's loop (and the test closing it) never waits on a port that is gone. serialport's
 * drain() on a closed port waits for an 'open' that never comes; this hung a CI run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Wire } from '../../../src/sim/dex/wire.js';
import { createPtyPair } from '../../support/pty.js';

test('a send under way when the wire closes ends with the close', { timeout: 30_000 }, async () => {
  const pty = await createPtyPair();
  try {
    for (let i = 0; i < 20; i++) {
      const wire = await Wire.open<never>(pty.vmcPath, 9600, () => []);
      // Closed right after the write was queued: in the window between its callback and drain().
      const sent = wire.send(Buffer.from([0x04]), 0);
      const closed = wire.close();
      const outcome = await Promise.race([sent.then(() => 'ended'), new Promise((r) => setTimeout(() => r('still waiting'), 5000).unref())]);
      assert.equal(outcome, 'ended', `send ${i} never ended after close`);
      await closed;
      assert.equal(wire.isClosed, true);
    }
  } finally {
    await pty.close();
  }
});
