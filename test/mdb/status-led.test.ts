/**
 * The status LED follows the board's polls and the reader's state, not the port being open
 * (docs/devices.md, "What the LED says"): the machine loop over the in-memory wire with the VMC
 * simulator, the LED a recorder of the states it is set to.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MachineLoop } from '../../src/mdb/index.js';
import { StatusLedDriver } from '../../src/mdb/status-led.js';
import { MemoryWire } from '../../src/mdb/transport/index.js';
import { silentLogger } from '../../src/core/log.js';
import { VmcSimulator } from '../../src/sim/vmc/index.js';
import type { StatusLedState } from '../../src/device/gpio.js';
import { PaymentDouble, testMdb, waitFor } from './support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function rig() {
  const wire = new MemoryWire();
  const sim = new VmcSimulator({ link: wire.vmcEnd, pollIntervalMs: 50 });
  const pay = new PaymentDouble();
  const loop = new MachineLoop({
    mdb: testMdb({ linkWatchdogMs: 500 }),
    decimalPlaces: 2,
    currencyNumeric: '978',
    openTransport: wire.openAgent,
    post: pay.post,
    log: silentLogger(),
    requestIdPrefix: 'rq',
    boardAnswerMs: 300,
  });
  const states: StatusLedState[] = [];
  const led = new StatusLedDriver(loop, { set: (s) => void states.push(s) });
  led.setHealth({ fault: false, gatewayOnline: true, outboxPending: 0 });
  const close = async () => {
    await loop.stop();
    await sim.close();
  };
  return { sim, pay, loop, states, led, close };
}

test('port reopened with the board still silent: the LED keeps the fault until polls come back', T, async () => {
  const r = rig();
  try {
    r.loop.start();
    await r.pay.waitStatus('enabled');
    await waitFor('the LED ready with the reader enabled', () => r.states.at(-1) === 'ready');
    const opens = r.loop.stats().link.opens;
    r.sim.silent(60_000); // silent until told otherwise, below
    await waitFor('the LED in fault once the watchdog expired', () => r.states.at(-1) === 'fault', 5000);
    const faultAt = r.states.length - 1;
    // The port is closed and opened again (the watchdog's restart); the board has not polled since.
    await waitFor('the port reopened', () => r.loop.stats().link.opens > opens && r.loop.stats().link.up, 5000);
    assert.equal(r.states.at(-1), 'fault', `LED states: ${r.states.join(' ')}`);
    assert.deepEqual(
      r.states.slice(faultAt).filter((s) => s !== 'fault'),
      [],
      `LED states: ${r.states.join(' ')}`,
    );

    r.sim.silent(0); // the board polls again
    await r.pay.waitStatus('enabled', 5000);
    await waitFor('the LED ready again with the reader enabled', () => r.states.at(-1) === 'ready', 5000);
  } finally {
    await r.close();
  }
});
