/**
 * `qrvend relay` against a real broker (aedes on loopback in `npm test`; mosquitto under
 * QRVEND_TEST_BROKER=mosquitto) and simulated machines on it. Two of the machines run the real
 * Start decisions over a real ledger (src/start/relayed.ts), so "unchanged" is checked against
 * what a machine really answers; the others are canned (silent, not taking relayed Starts, gone).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startSimMachines, type SimMachines } from '../../rigs/relay/machines.js';
import type { Relay } from '../../src/relay/index.js';
import type { RelayedStartOutcome } from '../../src/start/index.js';
import { createTestMachine, type TestMachine } from './support/machine.js';
import { createRelayRig, getJson, postStart, until, type RelayRig } from './support/relay-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const TOKEN = randomBytes(32).toString('hex');
let seq = 0;
const txId = () => `relay-t-${process.pid}-${++seq}`;

let rig: RelayRig;
let relay: Relay;
let sims: SimMachines;
let machineA: TestMachine;
let machineB: TestMachine;
/** Answers of the silent machine, released at the end so nothing stays pending. */
let releaseSilent: () => void = () => {};

function body(overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    AppUserId: 'wallet-user-1',
    SecretToken: TOKEN,
    TerminalId: 'TERM-A',
    TransactionId: txId(),
    ...overrides,
  });
}

const MACHINES = [
  { machineId: 'TERM-A', terminalId: 'TERM-A', uniQr: 'QR-A' },
  { machineId: 'TERM-B', terminalId: 'TERM-B', uniQr: 'QR-B' },
  { machineId: 'TERM-SILENT', terminalId: 'TERM-SILENT', uniQr: null },
  { machineId: 'TERM-NOPE', terminalId: 'TERM-NOPE', uniQr: null },
  { machineId: 'TERM-GONE', terminalId: 'TERM-GONE', uniQr: 'QR-GONE' },
];

before(async () => {
  rig = await createRelayRig({ machines: MACHINES, token: TOKEN });
  machineA = await createTestMachine({
    terminalId: 'TERM-A',
    uniQr: 'QR-A',
    token: TOKEN,
    keyring: rig.kit.machineKeyring,
  });
  machineB = await createTestMachine({
    terminalId: 'TERM-B',
    uniQr: 'QR-B',
    token: TOKEN,
    listen: false,
    keyring: rig.kit.machineKeyring,
  });
  const silent = new Promise<RelayedStartOutcome>(
    (resolve) => (releaseSilent = () => resolve({ ok: false, error: { code: 'TOO_LATE', message: 'test over' } })),
  );
  sims = await startSimMachines({
    url: rig.broker.url,
    protocolVersion: rig.protocolVersion,
    signer: rig.kit.machineSigner,
    machines: [
      { machineId: 'TERM-A', terminalId: 'TERM-A', uniQr: 'QR-A' },
      { machineId: 'TERM-B', terminalId: 'TERM-B', uniQr: 'QR-B' },
      { machineId: 'TERM-SILENT', terminalId: 'TERM-SILENT', uniQr: null },
      { machineId: 'TERM-NOPE', terminalId: 'TERM-NOPE', uniQr: null, acceptsRelayedStart: false },
      { machineId: 'TERM-GONE', terminalId: 'TERM-GONE', uniQr: 'QR-GONE' },
    ],
    answer: (machineId, args) => {
      if (machineId === 'TERM-A') return machineA.relayed.start(args);
      if (machineId === 'TERM-B') return machineB.relayed.start(args);
      return silent;
    },
    confirm: (machineId, args) => {
      if (machineId === 'TERM-A') machineA.relayed.confirm(args);
      if (machineId === 'TERM-B') machineB.relayed.confirm(args);
    },
  });
  relay = await rig.startRelay();
  await until(
    () => relay.link.stats().machines === 5,
    10_000,
    'the relay to know the 5 machines from their retained status',
  );
});

after(async () => {
  releaseSilent();
  await sims?.close();
  await rig?.close();
  await machineA?.close();
  await machineB?.close();
});

test("a Start reaches its machine by TerminalId and the machine's answer comes back unchanged", T, async () => {
  const wrong = body({ SecretToken: 'z'.repeat(64) });
  const viaRelay = await postStart(relay.origin, wrong);
  const direct = await postStart(machineA.endpoint!.origin, wrong);
  assert.equal(viaRelay.json.Status.Code, 9);
  assert.equal(viaRelay.status, direct.status);
  assert.equal(viaRelay.contentType, direct.contentType);
  assert.equal(viaRelay.text, direct.text, 'byte for byte what the machine answers directly');

  const start = body();
  const approved = await postStart(relay.origin, start);
  assert.equal(approved.json.Status.Verdict, 'Approved');
  assert.equal(approved.json.TransactionId, JSON.parse(start).TransactionId);
  assert.ok(machineA.ledger.transactionIdUsed(JSON.parse(start).TransactionId));
  const replay = await postStart(relay.origin, start);
  assert.equal(replay.json.Status.Code, 996);
});

test('a Start by UniQR alone reaches its machine', T, async () => {
  const start = JSON.stringify({
    AppUserId: 'wallet-user-2',
    SecretToken: TOKEN,
    UniQR: 'QR-B',
    TransactionId: txId(),
  });
  const reply = await postStart(relay.origin, start);
  assert.equal(reply.json.Status.Verdict, 'Approved');
  const tx = JSON.parse(start).TransactionId as string;
  assert.ok(machineB.ledger.transactionIdUsed(tx));
  await until(() => machineB.authorizations.includes(tx), 5_000, 'the Authorization of the relayed Start');
});

test('unknown machine: Declined 50, nothing forwarded; TerminalId and UniQR of two machines: 50', T, async () => {
  const before = [...sims.received.values()].reduce((a, b) => a + b, 0);
  const unknown = await postStart(relay.origin, body({ TerminalId: 'TERM-NOBODY' }));
  assert.equal(unknown.json.Status.Code, 50);
  assert.equal(unknown.status, 200);
  const unknownQr = await postStart(
    relay.origin,
    JSON.stringify({ AppUserId: 'u', SecretToken: TOKEN, UniQR: 'QR-NOBODY', TransactionId: txId() }),
  );
  assert.equal(unknownQr.json.Status.Code, 50);
  const mixed = await postStart(relay.origin, body({ TerminalId: 'TERM-A', UniQR: 'QR-B' }));
  assert.equal(mixed.json.Status.Code, 50);
  assert.equal(
    [...sims.received.values()].reduce((a, b) => a + b, 0),
    before,
    'nothing was published',
  );
});

test('a body the relay cannot read gets the answer the machine gives it', T, async () => {
  for (const bad of [
    '{"AppUserId": ',
    '{"TerminalId":"TERM-A","TerminalId":"TERM-B"}',
    JSON.stringify({ TerminalId: 'TERM-A' }),
    Buffer.from([0x7b, 0xff, 0x7d]),
  ]) {
    const viaRelay = await postStart(relay.origin, bad);
    const direct = await postStart(machineA.endpoint!.origin, bad);
    assert.equal(viaRelay.status, direct.status);
    assert.equal(viaRelay.text, direct.text);
    assert.equal(viaRelay.json.Status.Verdict, 'Declined');
  }
  const wrongPath = await postStart(relay.origin, body(), {
    path: '/payment/v2/transactions/Gateway/acme-wallet/stop',
  });
  assert.equal(wrongPath.status, 404);
  const wrongType = await postStart(relay.origin, body(), { contentType: 'text/plain' });
  assert.equal(wrongType.status, 415);
});

test('no answer in time, a machine that takes no relayed Starts, a machine gone: Declined 30', T, async () => {
  const silent = await postStart(relay.origin, body({ TerminalId: 'TERM-SILENT' }));
  assert.equal(silent.json.Status.Code, 30);
  assert.equal(sims.received.get('TERM-SILENT'), 1, 'the silent machine did get the Start');
  const nope = await postStart(relay.origin, body({ TerminalId: 'TERM-NOPE' }));
  assert.equal(nope.json.Status.Code, 30);
  assert.equal(sims.received.get('TERM-NOPE') ?? 0, 0);

  await sims.drop('TERM-GONE');
  await until(
    () =>
      relay.link.directory.find('TERM-GONE', undefined).kind === 'found' &&
      (relay.link.directory.find('TERM-GONE', undefined) as { machine: { online: boolean } }).machine.online === false,
    10_000,
    "the machine's last will",
  );
  const gone = await postStart(relay.origin, body({ TerminalId: 'TERM-GONE' }));
  assert.equal(gone.json.Status.Code, 30);
  const goneByQr = await postStart(
    relay.origin,
    JSON.stringify({ AppUserId: 'u', SecretToken: TOKEN, UniQR: 'QR-GONE', TransactionId: txId() }),
  );
  assert.equal(goneByQr.json.Status.Code, 30);
  const counters = relay.stats().server.byOutcome;
  assert.equal(counters['timeout'], 1);
  assert.equal(counters['not-accepting'], 1);
  assert.equal(counters['offline'], 2);
});

test('the SecretToken and the bodies never reach the relay log', T, async () => {
  const text = rig.logs.join('');
  assert.ok(text.includes('relay answered'), 'the relay logged its answers');
  assert.ok(!text.includes(TOKEN));
  assert.ok(!text.includes('wallet-user-1'), 'no body member value is logged');
});

test(
  '/healthz says the broker is connected and how many machines ' +
    'are known; a broker that is down gets 30 at once and 503',
  T,
  async () => {
    const healthy = await getJson(relay.origin, '/healthz');
    assert.equal(healthy.status, 200);
    assert.equal(healthy.json.broker, 'connected');
    assert.equal(healthy.json.machines, 5);

    await rig.broker.stop();
    try {
      await until(() => !relay.link.connected, 10_000, 'the relay to see the broker gone');
      const outcomesBefore = relay.stats().server.byOutcome;
      const reply = await postStart(relay.origin, body({ TerminalId: 'TERM-B' }));
      assert.equal(reply.json.Status.Code, 30);
      // Answered at once: the link is down (or, where the broker sent the machines' last wills as it
      // stopped, as mosquitto does, the machine is known offline); never by waiting out the timeout.
      const outcomes = relay.stats().server.byOutcome;
      const grew = (k: string) => (outcomes[k] ?? 0) - (outcomesBefore[k] ?? 0);
      assert.equal(grew('broker-down') + grew('offline'), 1, JSON.stringify(outcomes));
      assert.equal(grew('timeout'), 0);
      const down = await getJson(relay.origin, '/healthz');
      assert.equal(down.status, 503);
      assert.equal(down.json.broker, 'disconnected');
    } finally {
      await rig.broker.start();
    }
    await until(() => relay.link.connected, 15_000, 'the relay to reconnect');
  },
);
