/**
 * A flood on `cmd/start.confirm` cannot turn a wallet's Approved into no sale (docs/security.md,
 * "Budgets per source"): the wallet is told Approved if and only if the machine authorizes.
 * Through the real daemon, `qrvend relay` and mosquitto with the documented ACL (loaded as it is).
 * The operators' broker account (it may publish on every machine's `cmd/` topics and read them)
 * answers each `cmd/start` it sees with 60 junk messages on `cmd/start.confirm` at once, then 60
 * a second for 2.5 s: unsigned ones, ones naming a key the machine does not trust, unreadable
 * ones, and forgeries in the relay's name for the very Start (its TransactionId and voucher nonce
 * copied from `cmd/start`) with a signature that is not the relay's. Three Starts.
 *
 * Before: the junk spent the `start` budget (20/s, shared by `cmd/start` and `start.confirm`), the
 * relay's genuine confirmation was dropped, the wallet was told Approved and the machine dropped
 * the held Start: no session, no Authorization, 3 times of 3. Now what names no trusted key spends
 * the untrusted share, and a confirmation carrying a held Start's voucher nonce is checked at once.
 *
 * mosquitto only (a flood over seconds): `npm run fleet-test`. In `npm test`, the same intake in
 * process: test/fleet/machine-link/command-server.test.ts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import mqtt, { type MqttClient } from 'mqtt';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import type { TestBroker } from '../../../rigs/broker/index.js';
import { createTrustKit, type TrustKit } from '../../../rigs/relay/trust-kit.js';
import { sendStart, newWalletTransactionId } from '../../../src/sim/wallet/index.js';
import { silentLogger } from '../../../src/core/log.js';
import { startRelay, validateRelayConfig, type Relay } from '../../../src/relay/index.js';
import { buy } from '../../e2e/support/static-session.js';
import { vmcIdle, waitTx } from '../../e2e/support/e2e-rig.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const ACL_FILE = fileURLToPath(new URL('../../../../docs/fleet/mosquitto-acl.conf', import.meta.url));
const skip =
  process.env.QRVEND_TEST_BROKER === 'mosquitto'
    ? false
    : 'runs against mosquitto with the documented ACL only: npm run fleet-test (QRVEND_TEST_BROKER=mosquitto)';
const PREFIX = 'qrvend';
const MACHINE = 'RIG-TERMINAL-1';
const T = { skip, timeout: TEST_DEADLINE_MS };
const USERS = [
  { username: MACHINE, password: 'pw-machine-c2' },
  { username: 'qrvend-relay', password: 'pw-relay-c2' },
  { username: 'qrvend-operator', password: 'pw-operator-c2' },
];
const confirmTopic = `${PREFIX}/${MACHINE}/cmd/start.confirm`;

let broker: TestBroker;
let rig: Rig;
let relay: Relay;
let kit: TrustKit;
let flooder: MqttClient;
/** Junk published per Start, and the flood runs still going. */
const sent: number[] = [];
const floods: Array<Promise<void>> = [];

const password = (username: string) => USERS.find((u) => u.username === username)!.password;

/** One burst of junk for the Start seen on cmd/start (its TransactionId and voucher nonce are readable there). */
function junk(n: number, txId: string, startNonce: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const kind = i % 4;
    if (kind === 0) out.push(JSON.stringify({ args: { txId, startNonce: `x${i}`.padEnd(22, 'x') } }));
    if (kind === 1)
      out.push(JSON.stringify({ args: { txId, startNonce, voucher: { keyId: 'nobody', nonce: 'n'.repeat(22) } } }));
    if (kind === 2) out.push(`{"args":{"txId":"${txId}"`);
    if (kind === 3) {
      // In the relay's name for this very Start, a signature that is not the relay's.
      const voucher = { keyId: 'relay-1', issuedAt: Date.now(), expiresAt: Date.now() + 60_000 };
      const forged = { ...voucher, nonce: `f${i}`.padEnd(22, 'f'), sig: `${'A'.repeat(85)}w==` };
      out.push(JSON.stringify({ args: { txId, startNonce, voucher: forged } }));
    }
  }
  return out;
}

/** 60 junk messages at once, then 60 a second for 2.5 s: bounded, loopback only. */
async function floodFor(txId: string, startNonce: string): Promise<void> {
  let count = 0;
  const burst = (n: number) => {
    for (const body of junk(n, txId, startNonce)) flooder.publish(confirmTopic, body, { qos: 0 });
    count += n;
  };
  burst(60);
  for (let tick = 0; tick < 25; tick++) {
    await new Promise((r) => setTimeout(r, 100));
    burst(6);
  }
  sent.push(count);
}

before(async () => {
  if (skip !== false) return;
  const { startMosquitto } = await import('../../../rigs/broker/mosquitto-broker.js');
  broker = await startMosquitto({ users: USERS, acl: readFileSync(ACL_FILE, 'utf8') });
  kit = createTrustKit({
    machines: [{ machineId: MACHINE, terminalId: MACHINE, uniQr: 'RIG-UNIQR-1' }],
    integratorName: 'rig-wallet',
  });
  const secret = (username: string) => {
    const file = join(kit.dir, `${username}.password`);
    writeFileSync(file, `${password(username)}\n`, { mode: 0o600 });
    return file;
  };
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: {
      start: { listen: null },
      fleet: {
        url: broker.url,
        topicPrefix: PREFIX,
        machineId: MACHINE,
        protocolVersion: 5,
        trustFile: kit.machineTrustFile,
        machineKeyFile: kit.machineKeyFile(MACHINE),
        username: MACHINE,
        passwordFile: secret(MACHINE),
      },
    },
  });
  kit.writeToken(rig.secretToken);
  await rig.startAgent();
  const relayBroker = {
    url: broker.url,
    topicPrefix: PREFIX,
    protocolVersion: 5,
    username: 'qrvend-relay',
    passwordFile: secret('qrvend-relay'),
  };
  relay = await startRelay(
    validateRelayConfig({ relay: { listen: '127.0.0.1:0', broker: relayBroker, ...kit.relayConfig() } }, 'test'),
    silentLogger(),
  );
  await until(
    () => {
      const found = relay.link.directory.find(MACHINE, undefined);
      return found.kind === 'found' && found.machine.online && found.machine.acceptsRelayedStart;
    },
    15_000,
    'the relay to believe the machine online',
  );
  flooder = await mqtt.connectAsync(broker.url, {
    protocolVersion: 5,
    clientId: 'confirm-flooder',
    reconnectPeriod: 0,
    username: 'qrvend-operator',
    password: password('qrvend-operator'),
  });
  flooder.on('message', (_topic, payload) => {
    const request = JSON.parse(payload.toString('utf8')) as { args: { body: string; voucher: { nonce: string } } };
    const txId = (JSON.parse(request.args.body) as { TransactionId: string }).TransactionId;
    floods.push(floodFor(txId, request.args.voucher.nonce));
  });
  await flooder.subscribeAsync(`${PREFIX}/${MACHINE}/cmd/start`, { qos: 0 });
});

after(async () => {
  await Promise.all(floods);
  await flooder?.endAsync(true);
  await relay?.close();
  await rig?.close();
  await broker?.close();
  kit?.remove();
});

test('junk on start.confirm while a Start is held: Approved to the wallet and authorized, 3 of 3', T, async (t) => {
  for (let round = 1; round <= 3; round++) {
    const opened = rig.nextCommand((c) => c.kind === 'start', 15_000, `round ${round}: C,START`);
    opened.catch(() => {});
    const transactionId = newWalletTransactionId();
    const start = await sendStart({
      url: relay.origin,
      integratorName: rig.integratorName,
      secretToken: rig.secretToken,
      terminalId: rig.terminalId,
      transactionId,
      timeoutMs: 10_000,
    });
    const approvedAt = performance.now();
    assert.equal(start.outcome.kind, 'approved', `round ${round}: ${JSON.stringify(start.outcome)}`);
    // Told Approved, so the machine must authorize: the session opens and the gateway sees the Authorization.
    await opened;
    await waitTx(rig, transactionId, (r) => r.requests.Authorization === 1, `round ${round}: the Authorization`);
    t.diagnostic(
      `round ${round}: the wallet's Approved to the Authorization in ${Math.round(performance.now() - approvedAt)} ms`,
    );
    await buy(rig, 12, 1.5);
    assert.ok(rig.vmc.endSession());
    await waitTx(rig, transactionId, (r) => r.state === 'settled', `round ${round}: the Settlement`);
    await vmcIdle(rig);
    await Promise.all(floods);
  }
  assert.equal(sent.length, 3, 'the flooder answered every cmd/start');
  assert.ok(
    sent.every((n) => n === 210),
    `210 junk messages per Start: ${sent.join(', ')}`,
  );
  assert.equal(relay.stats().server.confirmed, 3);
});
