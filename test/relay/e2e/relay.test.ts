/**
 * The Start relay end to end (docs/decisions/start-relay.md item 3): the wallet simulator -> `qrvend relay` (two
 * replicas) -> a real broker (aedes in `npm test`; mosquitto with QRVEND_TEST_BROKER=mosquitto) ->
 * the real daemon (`qrvend run`, its fleet worker and payment worker, start.listen null: no inbound
 * port) -> Authorization at the gateway simulator -> the MDB session on the VMC simulator (C,START)
 * -> Settlement.
 *
 * One daemon for the file; tests run in order and each leaves the reader idle and enabled.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startTestBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { sendStart, newWalletTransactionId, type StartResult } from '../../../src/sim/wallet/index.js';
import { layer } from '../../../src/config/load.js';
import { createLogger } from '../../../src/core/log.js';
import { startRelay, validateRelayConfig, type Relay } from '../../../src/relay/index.js';
import { buy } from '../../e2e/support/static-session.js';
import { tx, vmcIdle, waitTx } from '../../e2e/support/e2e-rig.js';
import type { BoardCommand } from '../../../src/mdb/codec/index.js';
import { TEST_CLOCK_ENV } from '../../../src/core/clock.js';
import { Writable } from 'node:stream';
import { createTrustKit, type TrustKit } from '../../../rigs/relay/trust-kit.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const PREFIX = 'qrvend-relay-e2e';
const T = { timeout: TEST_DEADLINE_MS };

let broker: TestBroker;
let rig: Rig;
let relayA: Relay;
let relayB: Relay;
let scratch: string;
let clockFile: string;
let kit: TrustKit;
const relayLogs: string[] = [];

function machineOnline(relay: Relay, online: boolean): boolean {
  const found = relay.link.directory.find(rig.terminalId, undefined);
  return found.kind === 'found' && found.machine.online === online && (!online || found.machine.acceptsRelayedStart);
}

async function startThrough(
  relay: Relay,
  options: { transactionId?: string; secretToken?: string; uniQr?: boolean } = {},
): Promise<StartResult> {
  return sendStart({
    url: relay.origin,
    integratorName: rig.integratorName,
    secretToken: options.secretToken ?? rig.secretToken,
    ...(options.uniQr ? { uniQr: rig.uniQr } : { terminalId: rig.terminalId }),
    ...(options.transactionId !== undefined ? { transactionId: options.transactionId } : {}),
    timeoutMs: 10_000,
  });
}

/** A relayed Start that opens a session (the VMC sees C,START), one vend, the session closed and settled. */
async function saleThrough(relay: Relay, options: { uniQr?: boolean } = {}): Promise<string> {
  const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
  opened.catch(() => {});
  const start = await startThrough(relay, options);
  assert.equal(start.outcome.kind, 'approved', `Start through the relay: ${JSON.stringify(start.outcome)}`);
  const cmd = (await opened) as Extract<BoardCommand, { kind: 'start' }>;
  assert.equal(cmd.funds, 10);
  await buy(rig, 12, 1.5);
  assert.ok(rig.vmc.endSession());
  const settled = await waitTx(rig, start.transactionId, (t) => t.state === 'settled', 'the Settlement');
  assert.equal(settled.settlement?.amount, 1.5);
  await vmcIdle(rig);
  return start.transactionId;
}

before(async () => {
  broker = await startTestBroker();
  const protocolVersion: 4 | 5 = broker.protocolVersions.includes(5) ? 5 : 4;
  scratch = mkdtempSync(join(tmpdir(), 'qrvend-relay-e2e-'));
  clockFile = join(scratch, 'clock-offset');
  writeFileSync(clockFile, '0');
  // The operator's registry names the rig's machine (machineId = its TerminalId); the machine trusts the relay's key.
  kit = createTrustKit({
    machines: [{ machineId: 'RIG-TERMINAL-1', terminalId: 'RIG-TERMINAL-1', uniQr: 'RIG-UNIQR-1' }],
    integratorName: 'rig-wallet',
  });
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: {
      start: { listen: null },
      fleet: {
        url: broker.url,
        topicPrefix: PREFIX,
        protocolVersion,
        trustFile: kit.machineTrustFile,
        machineKeyFile: kit.machineKeyFile('RIG-TERMINAL-1'),
      },
    },
    env: { [TEST_CLOCK_ENV]: clockFile },
  });
  kit.writeToken(rig.secretToken);
  await rig.startAgent();
  const destination = new Writable({
    write(chunk: Buffer, _e, done) {
      relayLogs.push(chunk.toString('utf8'));
      done();
    },
  });
  const log = createLogger({ level: 'info', destination });
  const relayConfig = (clientId: string) =>
    validateRelayConfig(
      {
        relay: {
          listen: '127.0.0.1:0',
          broker: { url: broker.url, topicPrefix: PREFIX, protocolVersion, clientId },
          timeoutMs: 3_000,
          ...kit.relayConfig(),
        },
      },
      'test',
    );
  relayA = await startRelay(relayConfig('relay-a'), log);
  relayB = await startRelay(relayConfig('relay-b'), log);
  await until(
    () => machineOnline(relayA, true) && machineOnline(relayB, true),
    15_000,
    'both relays to see the machine online and taking relayed Starts',
  );
});

after(async () => {
  await relayA?.close();
  await relayB?.close();
  await rig?.close();
  await broker?.close();
  kit?.remove();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

test('the machine runs with no inbound port (start.listen null)', T, async () => {
  const ready = rig.agent!.logs.find((l) => l.msg === 'payment worker ready');
  assert.equal(ready?.startUrl, null);
  assert.equal(rig.agent!.startOrigin, null);
});

test('wallet -> relay -> broker -> machine -> Authorization -> C,START -> Settlement', T, async () => {
  const txId = await saleThrough(relayA);
  assert.equal(tx(rig, txId)?.requests.Authorization, 1);
});

test(
  'two replicas in turn serve the same machine; a TransactionId replayed through the other replica gets 996',
  T,
  async () => {
    const first = await saleThrough(relayA);
    const second = await saleThrough(relayB, { uniQr: true });
    const replayB = await startThrough(relayB, { transactionId: first });
    assert.equal(replayB.outcome.kind, 'declined');
    assert.equal(replayB.outcome.kind === 'declined' && replayB.outcome.code, 996);
    const replayA = await startThrough(relayA, { transactionId: second, uniQr: true });
    assert.equal(replayA.outcome.kind === 'declined' && replayA.outcome.code, 996);
    // Nothing more reached the gateway for either: one Authorization each.
    assert.equal(tx(rig, first)?.requests.Authorization, 1);
    assert.equal(tx(rig, second)?.requests.Authorization, 1);
  },
);

test('a wrong token through the relay gets 9 and opens nothing', T, async () => {
  const wrong = await startThrough(relayB, { secretToken: 'w'.repeat(64) });
  assert.equal(wrong.outcome.kind, 'declined');
  assert.equal(wrong.outcome.kind === 'declined' && wrong.outcome.code, 9);
  assert.equal(wrong.outcome.kind === 'declined' && wrong.outcome.message, 'not allowed: integrator not authenticated');
  assert.equal(tx(rig, wrong.transactionId), undefined);
});

test(
  "a Start that reaches the machine after the relay's deadline never opens a session and is recorded as refused",
  T,
  async () => {
    const sessionsBefore = rig.vmc.records().length;
    // The machine's wall clock runs 20 s ahead of the relay's: every deadline has passed on arrival.
    writeFileSync(clockFile, '20000');
    await new Promise((r) => setTimeout(r, 100)); // the daemon re-reads the offset every 50 ms
    try {
      const transactionId = newWalletTransactionId();
      const refusedLine = rig.agent!.waitForLog(
        (l) =>
          l.msg === "relayed Start refused: it reached the machine after the relay's deadline" &&
          l.txId === transactionId,
        15_000,
        'the refusal in the journal',
      );
      refusedLine.catch(() => {});
      const late = await startThrough(relayA, { transactionId });
      assert.equal(late.outcome.kind, 'declined');
      assert.equal(late.outcome.kind === 'declined' && late.outcome.code, 30);
      const line = await refusedLine;
      assert.ok(typeof line.lateByMs === 'number' && line.lateByMs > 10_000);
      assert.equal(tx(rig, transactionId), undefined, 'no Authorization reached the gateway');
      assert.equal(rig.vmc.records().length, sessionsBefore, 'the VMC saw no C,START');
      assert.ok(!rig.agent!.logs.some((l) => l.msg === 'Start accepted' && l.txId === transactionId));
    } finally {
      writeFileSync(clockFile, '0');
    }
    await new Promise((r) => setTimeout(r, 100)); // the offset is re-read every 50 ms
    await vmcIdle(rig);
  },
);

test('machine offline: Declined 30 within the timeout; back online it is served again', T, async () => {
  await rig.stopAgent('SIGKILL');
  await until(() => machineOnline(relayA, false) && machineOnline(relayB, false), 15_000, "the machine's last will");
  const offlineBefore = relayA.stats().server.byOutcome['offline'] ?? 0;
  const offline = await startThrough(relayA);
  assert.equal(offline.outcome.kind === 'declined' && offline.outcome.code, 30);
  // Answered from the machine's status, without waiting out the timeout for a machine that is gone.
  assert.equal(relayA.stats().server.byOutcome['offline'], offlineBefore + 1);
  await rig.startAgent();
  await until(() => machineOnline(relayA, true) && machineOnline(relayB, true), 15_000, 'the machine online again');
  await saleThrough(relayB);
});

test('the relayed answer to a wrong token is the direct one, byte for byte (the endpoint on again)', T, async () => {
  await rig.stopAgent('SIGTERM');
  const site = JSON.parse(readFileSync(rig.configFile, 'utf8'));
  writeFileSync(rig.configFile, JSON.stringify(layer(site, { start: { listen: '127.0.0.1:0' } })));
  await rig.startAgent();
  await until(() => machineOnline(relayA, true), 15_000, 'the machine online again');
  const transactionId = newWalletTransactionId();
  const viaRelay = await startThrough(relayA, { secretToken: 'v'.repeat(64), transactionId });
  const direct = await rig.start({ secretToken: 'v'.repeat(64), transactionId });
  assert.ok(viaRelay.outcome.kind === 'declined' && direct.outcome.kind === 'declined');
  assert.deepEqual(viaRelay.outcome.response, direct.outcome.response);
  assert.ok(!relayLogs.join('').includes(rig.secretToken), 'the relay never logs the SecretToken');
});
