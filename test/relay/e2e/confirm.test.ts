/**
 * docs/decisions/fleet-trust.md item 7 end to end: the wallet is told Approved if and only if the machine authorizes.
 * The real daemon (`qrvend run`, start.listen null) reaches the broker (aedes; mosquitto under
 * `npm run fleet-test`) through a TCP gate that delays what goes down to the machine by 1.55 s and
 * what comes up by 0.7 s; `qrvend relay` (in-process, timeout 2 s) is on the broker directly.
 *
 * Before: the machine accepted the Start 450 ms before the relay's deadline, the answer came back
 * after it, the wallet got Declined 30, and the machine sent C,START with funds 10 and the gateway
 * recorded an Authorization and a Settlement. Now the machine holds the Authorization until the
 * relay confirms the answer reached the wallet in time; none comes, the Start is dropped.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startTcpGate, startTestBroker, type TcpGate, type TestBroker } from '../../../rigs/broker/index.js';
import { sendStart, newWalletTransactionId } from '../../../src/sim/wallet/index.js';
import { createLogger } from '../../../src/core/log.js';
import { startRelay, validateRelayConfig, type Relay } from '../../../src/relay/index.js';
import { createTrustKit, type TrustKit } from '../../../rigs/relay/trust-kit.js';
import { tx, vmcIdle, waitTx } from '../../e2e/support/e2e-rig.js';
import { buy } from '../../e2e/support/static-session.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const PREFIX = 'qrvend-confirm-e2e';
const T = { timeout: TEST_DEADLINE_MS };

let broker: TestBroker;
let gate: TcpGate;
let rig: Rig;
let relay: Relay;
let kit: TrustKit;
let scratch: string;

function machineOnline(): boolean {
  const found = relay.link.directory.find(rig.terminalId, undefined);
  return found.kind === 'found' && found.machine.online && found.machine.acceptsRelayedStart;
}

before(async () => {
  broker = await startTestBroker();
  const protocolVersion: 4 | 5 = broker.protocolVersions.includes(5) ? 5 : 4;
  gate = await startTcpGate({ port: Number(new URL(broker.url).port) });
  scratch = mkdtempSync(join(tmpdir(), 'qrvend-confirm-e2e-'));
  kit = createTrustKit({
    machines: [{ machineId: 'RIG-TERMINAL-1', terminalId: 'RIG-TERMINAL-1', uniQr: 'RIG-UNIQR-1' }],
    integratorName: 'rig-wallet',
  });
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: {
      start: { listen: null },
      fleet: {
        url: gate.url,
        topicPrefix: PREFIX,
        protocolVersion,
        trustFile: kit.machineTrustFile,
        machineKeyFile: kit.machineKeyFile('RIG-TERMINAL-1'),
        keepaliveS: 60,
      },
    },
  });
  kit.writeToken(rig.secretToken);
  await rig.startAgent();
  const log = createLogger({ level: 'info', destination: new Writable({ write: (_c, _e, done) => done() }) });
  relay = await startRelay(
    validateRelayConfig(
      {
        relay: {
          listen: '127.0.0.1:0',
          broker: { url: broker.url, topicPrefix: PREFIX, protocolVersion },
          timeoutMs: 2_000,
          ...kit.relayConfig(),
        },
      },
      'test',
    ),
    log,
  );
  await until(machineOnline, 15_000, 'the relay to see the machine online');
});

after(async () => {
  await relay?.close();
  await rig?.close();
  await gate?.close();
  await broker?.close();
  kit?.remove();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const startThroughRelay = (transactionId: string) =>
  sendStart({
    url: relay.origin,
    integratorName: rig.integratorName,
    secretToken: rig.secretToken,
    terminalId: rig.terminalId,
    transactionId,
    timeoutMs: 10_000,
  });

test('the normal path still approves and authorizes (the confirmation is one more broker trip)', T, async (t) => {
  const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
  opened.catch(() => {});
  const transactionId = newWalletTransactionId();
  const start = await startThroughRelay(transactionId);
  const answeredAt = performance.now();
  assert.equal(start.outcome.kind, 'approved', JSON.stringify(start.outcome));
  await waitTx(rig, transactionId, (r) => r.requests.Authorization === 1, 'the Authorization');
  t.diagnostic(
    `wallet's Approved to the Authorization at the gateway: ` +
      `${Math.round(performance.now() - answeredAt)} ms (loopback)`,
  );
  await opened;
  await buy(rig, 12, 1.5);
  assert.ok(rig.vmc.endSession());
  await waitTx(rig, transactionId, (r) => r.state === 'settled', 'the Settlement');
  await vmcIdle(rig);
});

test('1.55 s down, 0.7 s up, relay timeout 2 s: the wallet gets Declined 30 and nothing is authorized', T, async () => {
  const sessionsBefore = rig.vmc.records().length;
  gate.setDelays({ toClientMs: 1_550, toBrokerMs: 700 });
  try {
    const transactionId = newWalletTransactionId();
    const accepted = rig.agent!.waitForLog(
      (l) => l.msg === 'Start accepted' && l.txId === transactionId,
      15_000,
      'the machine accepting the Start (held)',
    );
    const dropped = rig.agent!.waitForLog(
      (l) =>
        l.msg === 'relayed Start dropped: not confirmed by the relay, nothing authorized' && l.txId === transactionId,
      20_000,
      'the drop',
    );
    accepted.catch(() => {});
    dropped.catch(() => {});
    const start = await startThroughRelay(transactionId);
    assert.equal(start.outcome.kind, 'declined');
    assert.equal(start.outcome.kind === 'declined' && start.outcome.code, 30);
    // The machine did take the Start (this is the case that charged before), then dropped it.
    await accepted;
    await dropped;
    assert.equal(tx(rig, transactionId), undefined, 'the gateway saw nothing of it: no Authorization, no Cancel');
    assert.equal(rig.vmc.records().length, sessionsBefore, 'the VMC saw no C,START');
    assert.equal(relay.stats().server.confirmed, 1, "only the first test's Start was confirmed");
  } finally {
    gate.setDelays({ toClientMs: 0, toBrokerMs: 0 });
  }
  // What was delayed has drained; the machine takes Starts again.
  await new Promise((r) => setTimeout(r, 1_700));
  await vmcIdle(rig);
  const again = await startThroughRelay(newWalletTransactionId());
  assert.equal(again.outcome.kind, 'approved', JSON.stringify(again.outcome));
});
