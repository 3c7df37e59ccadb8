/**
 * The machine loop over the in-memory wire (`mdb.port` = `sim`) with the in-process VMC simulator:
 * start-up, sessions, reopen after an unplug, the watchdog and the board reset line, a board
 * restart, graceful stop, stats.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MachineLoop, probeBoard } from '../../src/mdb/index.js';
import { MemoryWire } from '../../src/mdb/transport/index.js';
import { silentLogger } from '../../src/core/log.js';
import { VmcSimulator } from '../../src/sim/vmc/index.js';
import { PaymentDouble, assertBooksBalance, testMdb, waitFor } from './support.js';
import type { QrvendConfig } from '../../src/config/schema.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function rig(mdb: Partial<QrvendConfig['mdb']> = {}, extra: { pulses?: () => void } = {}) {
  const wire = new MemoryWire();
  const sim = new VmcSimulator({ link: wire.vmcEnd, pollIntervalMs: 50 });
  const pay = new PaymentDouble();
  const enabledAt: number[] = [];
  const loop = new MachineLoop({
    mdb: testMdb(mdb),
    decimalPlaces: 2,
    currencyNumeric: '978',
    openTransport: wire.openAgent,
    post: pay.post,
    log: silentLogger(),
    boardReset: extra.pulses ? { pulse: async () => extra.pulses!() } : undefined,
    onEnableWritten: (at) => enabledAt.push(at),
    requestIdPrefix: 'rq',
    boardAnswerMs: 300,
  });
  const close = async () => {
    await loop.stop();
    await sim.close();
  };
  return { wire, sim, pay, loop, enabledAt, close };
}

test('start: configuration sent, C,1 reported once, board.info posted, reader enabled', T, async () => {
  const r = rig();
  let events = 0;
  r.loop.on('enable-written', () => (events += 1));
  try {
    r.loop.start();
    await r.pay.waitStatus('enabled');
    assert.deepEqual(r.sim.received().slice(0, 9), [
      'C,0',
      'C,SETCONF,mdb-address=0x10',
      'C,SETCONF,mdb-always-idle=1',
      'C,SETCONF,mdb-currency-code=0x1978',
      'C,SETCONF,mdb-decimal-places=2',
      'C,SETCONF,mdb-scale-factor=1',
      'C,SETCONF,mdb-timeout-vend=60',
      'C,1',
      'V',
    ]);
    assert.equal(r.enabledAt.length, 1);
    assert.equal(events, 1);
    assert.deepEqual(r.pay.of('board.info'), [
      { type: 'board.info', firmware: 'qrvend-sim-1.0', boardId: 'SIMVMC0001' },
    ]);
    assert.deepEqual(r.pay.of('reader.status')[0], { type: 'reader.status', status: 'offline', txId: null });
  } finally {
    await r.close();
  }
});

test('a static session through the loop: approvals are written back before anything else', T, async () => {
  const r = rig();
  try {
    r.loop.start();
    await r.pay.waitStatus('enabled');
    r.loop.handle({ type: 'session.begin', txId: 'T1', funds: 3 });
    await r.pay.nth('session.started');
    assert.ok(r.sim.select(5, 1.2));
    await waitFor('approval at the VMC', () => r.sim.state().vend === 'approved');
    assert.equal(r.sim.received().at(-1), 'C,VEND,1.20');
    assert.ok(r.sim.vendSuccess());
    await r.pay.nth('vend.result');
    assert.ok(r.sim.select(6, 2.0)); // 1.80 left
    await waitFor('denial', () => r.pay.of('vend.denied')[0]);
    await waitFor('denial taken by the VMC', () => r.sim.state().vend === 'none');
    assert.ok(r.sim.endSession());
    const ended = await r.pay.nth('session.ended');
    assert.deepEqual(ended, {
      type: 'session.ended',
      txId: 'T1',
      reason: 'complete',
      vendsSucceeded: 1,
      amountVended: 1.2,
    });
    assertBooksBalance(r.pay.messages, r.sim.records());
  } finally {
    await r.close();
  }
});

test('unplug mid-session: session ended link-lost; replug: reopened and reconfigured', T, async () => {
  const r = rig();
  try {
    r.loop.start();
    await r.pay.waitStatus('enabled');
    r.loop.handle({ type: 'session.begin', txId: 'T1', funds: 3 });
    await r.pay.nth('session.started');
    r.wire.unplug();
    const ended = await r.pay.nth('session.ended');
    assert.equal(ended.reason, 'link-lost');
    assert.equal(r.pay.status(), 'offline');
    await new Promise((res) => setTimeout(res, 150)); // a few failed reopen attempts
    assert.ok(r.loop.stats().link.openFailures >= 1);
    r.wire.replug();
    await r.pay.waitStatus('enabled');
    assert.equal(r.sim.received().filter((l) => l === 'C,1').length, 2, 'configured again after the reopen');
    assert.equal(r.loop.stats().link.reopens, 1);
  } finally {
    await r.close();
  }
});

test('a silent board trips the watchdog: reset line pulsed, link restarted, reader rebuilt', T, async () => {
  let pulses = 0;
  const r = rig({ linkWatchdogMs: 500 }, { pulses: () => void (pulses += 1) });
  try {
    r.loop.start();
    await r.pay.waitStatus('enabled');
    r.loop.handle({ type: 'session.begin', txId: 'T1', funds: 3 });
    await r.pay.nth('session.started');
    r.sim.silent(900);
    const ended = await r.pay.nth('session.ended', 1, 3000);
    assert.equal(ended.reason, 'link-lost');
    await waitFor('a pulse', () => pulses >= 1);
    await waitFor(
      'enabled again',
      () => r.pay.status() === 'enabled' && r.sim.received().filter((l) => l === 'C,1').length >= 2,
      5000,
    );
    assertBooksBalance(r.pay.messages);
  } finally {
    await r.close();
  }
});

test('a board restart (boot banner) ends the session and reconfigures the board', T, async () => {
  const r = rig();
  try {
    r.loop.start();
    await r.pay.waitStatus('enabled');
    r.loop.handle({ type: 'session.begin', txId: 'T1', funds: 3 });
    await r.pay.nth('session.started');
    r.sim.resetBoard();
    const ended = await r.pay.nth('session.ended');
    assert.equal(ended.reason, 'vmc-reset');
    await waitFor('reconfigured', () => r.sim.state().hostEnabled && r.sim.state().config['mdb-always-idle'] === '1');
    await r.pay.waitStatus('enabled');
  } finally {
    await r.close();
  }
});

test('stop() lets the vend being dispensed finish, then stops the session and disables the reader', T, async () => {
  const r = rig();
  try {
    r.loop.start();
    await r.pay.waitStatus('enabled');
    r.loop.handle({ type: 'session.begin', txId: 'T1', funds: 3 });
    await r.pay.nth('session.started');
    r.sim.select(1, 1);
    await waitFor('approved', () => r.sim.state().vend === 'approved');
    const stopped = r.loop.stop();
    r.loop.handle({ type: 'session.begin', txId: 'T2', funds: 1 });
    assert.equal(r.pay.of('session.refused')[0]?.txId, 'T2');
    await new Promise((res) => setTimeout(res, 30));
    r.sim.vendSuccess();
    await stopped;
    await waitFor('C,0 at the VMC', () => r.sim.received().at(-1) === 'C,0');
    assert.equal(r.pay.of('vend.result')[0]?.outcome, 'success');
    assert.deepEqual(r.pay.of('session.ended')[0], {
      type: 'session.ended',
      txId: 'T1',
      reason: 'reader-cancel',
      vendsSucceeded: 1,
      amountVended: 1,
    });
    const tail = r.sim.received().slice(-2);
    assert.deepEqual(tail, ['C,STOP', 'C,0']);
    assert.equal(r.pay.status(), 'offline');
    assertBooksBalance(r.pay.messages, r.sim.records());
  } finally {
    await r.sim.close();
  }
});

test('stop() with a dispense that never reports fails it cleanly after stopTimeoutMs', T, async () => {
  const wire = new MemoryWire();
  const sim = new VmcSimulator({ link: wire.vmcEnd, pollIntervalMs: 50 });
  const pay = new PaymentDouble();
  const loop = new MachineLoop({
    mdb: testMdb(),
    decimalPlaces: 2,
    currencyNumeric: '978',
    openTransport: wire.openAgent,
    post: pay.post,
    log: silentLogger(),
    stopTimeoutMs: 200,
  });
  try {
    loop.start();
    await pay.waitStatus('enabled');
    loop.handle({ type: 'session.begin', txId: 'T1', funds: 3 });
    await pay.nth('session.started');
    sim.select(1, 1);
    await waitFor('approved', () => sim.state().vend === 'approved');
    await loop.stop();
    assert.equal(pay.of('vend.result')[0]?.outcome, 'timeout');
    assert.equal(pay.of('session.ended')[0]?.reason, 'reader-cancel');
    assertBooksBalance(pay.messages);
  } finally {
    await sim.close();
  }
});

test('noise is counted per reason and never disturbs the protocol', T, async () => {
  const r = rig();
  try {
    r.loop.start();
    await r.pay.waitStatus('enabled');
    await r.sim.noise(500);
    await waitFor('all noise counted', () => r.loop.stats().noise.total === 500);
    const s = r.loop.stats();
    assert.ok(
      s.noise.byReason.binary > 0 &&
        s.noise.byReason.overlong > 0 &&
        s.noise.byReason.unknown > 0 &&
        s.noise.byReason.malformed > 0,
    );
    assert.ok(s.linesIn >= 500 && s.linesOut >= 9);
    assert.equal(s.state, 'Enabled');
    r.loop.handle({ type: 'session.begin', txId: 'T1', funds: 3 });
    await r.pay.nth('session.started');
  } finally {
    await r.close();
  }
});

test('probeBoard reads the firmware and id', T, async () => {
  const wire = new MemoryWire();
  const sim = new VmcSimulator({ link: wire.vmcEnd, firmware: 'fw-3.2', boardId: 'B-77' });
  try {
    const info = await probeBoard({ path: 'sim', baudRate: 115200, timeoutMs: 1000, open: wire.openAgent });
    assert.deepEqual(info, { firmware: 'fw-3.2', boardId: 'B-77' });
    sim.silent(2000);
    await assert.rejects(
      probeBoard({ path: 'sim', baudRate: 115200, timeoutMs: 100, open: wire.openAgent }),
      /no answer to V/,
    );
  } finally {
    await sim.close();
  }
});
