/**
 * The reset-loop hold, end to end over a real pseudo-terminal pair: the MachineLoop with the link
 * the daemon uses, the VMC simulator playing a VMC that resets the reader after every setup. Once
 * the loop is seen the reader is held off the bus (C,0) for 30 s (docs/mdb.md, "VMC resets and
 * reset loops"). A held reader's board relays no polls, so its line is quiet: the link watchdog
 * must tell that from a dead board (it asks the board V), and nothing may enable the reader (C,1)
 * before the hold is over: not the watchdog, not a board restart, not the reconfiguration after it.
 * In the slow tier (`npm run test:slow`, docs/testing.md): it waits the hold's 30 s out. The hold
 * itself is seen in `npm test` too (test/e2e/vmc-real.test.ts, a VMC that resets after every setup).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MachineLoop } from '../../src/mdb/index.js';
import { createMdbTransport, openSerialLink } from '../../src/mdb/transport/index.js';
import { silentLogger } from '../../src/core/log.js';
import { VmcSimulator } from '../../src/sim/vmc/index.js';
import type { MainToPayment } from '../../src/ipc/messages.js';
import { createPtyPair } from '../support/pty.js';
import { PaymentDouble, testMdb, waitFor } from './support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

/** One thing seen, in the order it happened: a line the agent wrote, or the hold raised / released. */
type Seen =
  | { kind: 'command'; line: string; atMs: number }
  | { kind: 'hold'; active: boolean; atMs: number }
  | { kind: 'silent'; atMs: number };

async function holdRig() {
  const pty = await createPtyPair();
  // resetAfterSetup -1: the VMC resets the reader 20 ms after every setup, for ever.
  const sim = new VmcSimulator({ pollIntervalMs: 50, seed: 7, quirks: { resetAfterSetup: -1 } });
  sim.attach(await openSerialLink({ path: pty.vmcPath, baudRate: 115200 }));
  const seen: Seen[] = [];
  const t0 = performance.now();
  const at = () => Math.round(performance.now() - t0);
  sim.on('command', (_cmd: unknown, line: string) => seen.push({ kind: 'command', line, atMs: at() }));
  const pay = new PaymentDouble();
  const post = (m: MainToPayment) => {
    if (m.type === 'fleet.observe' && m.code === 'VMC_RESET_LOOP') {
      seen.push({ kind: 'hold', active: m.active, atMs: at() });
    }
    pay.post(m);
  };
  let pulses = 0;
  const config = testMdb({ port: pty.agentPath, linkWatchdogMs: 1000 });
  const loop = new MachineLoop({
    mdb: config,
    decimalPlaces: 2,
    currencyNumeric: '978',
    openTransport: createMdbTransport(config).open,
    post,
    log: silentLogger(),
    boardAnswerMs: 500,
    requestIdPrefix: 'rq',
    // The board's reset line: the simulated board restarts (boot banner, configuration lost).
    boardReset: { pulse: async () => void ((pulses += 1), sim.resetBoard()) },
  });
  loop.on('link', (change: { silent: boolean }) => change.silent && seen.push({ kind: 'silent', atMs: at() }));
  loop.start();
  const close = async () => {
    try {
      await loop.stop();
    } finally {
      await sim.close();
      await pty.close();
    }
  };
  return { sim, pay, loop, seen, pulses: () => pulses, close };
}

type HoldRig = Awaited<ReturnType<typeof holdRig>>;

/** What was seen since the hold was raised (it must be raised), and what that hold says of it. */
function sinceHold(r: HoldRig) {
  const start = r.seen.findIndex((s) => s.kind === 'hold' && s.active);
  assert.ok(start >= 0, 'the hold was raised');
  const held = r.seen.slice(start);
  const startAt = held[0]!.atMs;
  const commands = held.flatMap((s) => (s.kind === 'command' ? [`${s.line} @${s.atMs - startAt} ms`] : []));
  const enables = commands.filter((c) => c.startsWith('C,1 '));
  return { held, commands, enables, probes: commands.filter((c) => c.startsWith('V ')) };
}

const T = { timeout: TEST_DEADLINE_MS };

test('a held reader stays off the bus: quiet line probed, dead board restarted, C,1 only at the end', T, async () => {
  const r = await holdRig();
  try {
    const raised = () => r.seen.some((s) => s.kind === 'hold' && s.active);
    await waitFor('the reset loop to be seen and the reader held', raised, 20_000);
    await waitFor('the held reader to be disabled on the bus', () => r.sim.state().hostEnabled === false, 5000);
    const opensAtHold = r.loop.stats().link.opens;

    // The board is alive: no poll comes while the reader is disabled, the watchdog expires (1 s)
    // again and again. Two V lines after the hold are two expiries handled, whichever way.
    await waitFor('two watchdog expiries during the hold', () => sinceHold(r).probes.length >= 2, 15_000);
    const quiet = sinceHold(r);
    const lines = `agent lines since the hold: ${quiet.commands.join(', ')}`;
    assert.deepEqual(quiet.enables, [], `nothing may enable a held reader; ${lines}`);
    assert.equal(r.loop.stats().link.opens, opensAtHold, `the link was restarted during the hold; ${lines}`);
    assert.equal(r.pulses(), 0, 'the board reset line was pulsed although the board answered');
    const silentReports = quiet.held.filter((s) => s.kind === 'silent');
    assert.deepEqual(silentReports, [], "a held reader's quiet line is no silent board (BOARD_SILENT)");
    assert.equal(r.sim.state().hostEnabled, false);

    // The board dies for a while (nothing leaves it, commands are lost): V goes unanswered, so the
    // link is restarted with a board reset; the board is configured again, and stays disabled.
    r.sim.silent(2500);
    const restarted = () => r.pulses() >= 1 && r.loop.stats().link.opens > opensAtHold;
    await waitFor('the dead board restarted', restarted, 15_000);
    const configured = () => Object.keys(r.sim.state().config).length > 0 && r.pay.status() === 'disabled';
    await waitFor('the board configured again after it came back', configured, 15_000);
    const revived = sinceHold(r);
    assert.ok(
      revived.held.some((s) => s.kind === 'silent'),
      'the dead board was reported silent',
    );
    const since = `agent lines since the hold: ${revived.commands.join(', ')}`;
    assert.deepEqual(revived.enables, [], `the reconfiguration enabled a held reader; ${since}`);
    assert.equal(r.sim.state().hostEnabled, false);
    assert.ok(
      r.seen.every((s) => s.kind !== 'hold' || s.active),
      'the hold is still on',
    );

    // The hold ends (30 s after it began): then, and only then, the reader is enabled again.
    const released = () => r.seen.some((s) => s.kind === 'hold' && !s.active);
    await waitFor('the hold to be released', released, 45_000);
    await waitFor('C,1 after the release', () => sinceHold(r).enables.length > 0, 10_000);
    const all = sinceHold(r).held;
    const release = all.findIndex((s) => s.kind === 'hold' && !s.active);
    const firstEnable = all.findIndex((s) => s.kind === 'command' && s.line === 'C,1');
    assert.ok(firstEnable > release, `C,1 came before the release: ${sinceHold(r).commands.join(', ')}`);
  } finally {
    await r.close();
  }
});
