/**
 * The relay believes only the machine (docs/relay.md, "What the relay believes"): an operator's
 * broker account publishes, on the machine's own topics, a forged offline status, a forged
 * Declined for a Start the machine holds, and a forged Approved for a Start the machine refuses.
 * Through the real daemon (its machine key signs status, will and replies) and `qrvend relay`.
 *
 * - `npm test` (aedes, no ACL): every forgery reaches the relay, which refuses it, counts it per
 *   reason, and the wallet gets the machine's own answer.
 * - `npm run fleet-test` (mosquitto with the documented ACL, docs/fleet/mosquitto-acl.conf): the
 *   operator account may not even publish there ("Not authorized"); a broker administrator's account
 *   (readwrite on everything, added for this test only) can, and the relay refuses and counts it.
 *
 * Order makes the forgeries come first: the forger answers each `cmd/start` the moment it sees it,
 * while the machine's answer crosses its fleet worker, payment worker and ledger first.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt, { type IPublishPacket, type MqttClient } from 'mqtt';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startAedesBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { sendStart, type StartResult } from '../../../src/sim/wallet/index.js';
import { silentLogger } from '../../../src/core/log.js';
import { startRelay, validateRelayConfig, type Relay } from '../../../src/relay/index.js';
import { buy } from '../../e2e/support/static-session.js';
import { tx, vmcIdle, waitTx } from '../../e2e/support/e2e-rig.js';
import { createTrustKit, type TrustKit } from '../../../rigs/relay/trust-kit.js';
import { generateMachineKey } from '../../../src/trust/machine-key.js';
import { MachineSigner } from '../../../src/trust/machine-sig.js';
import { createPrivateKey } from 'node:crypto';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const ACL_FILE = fileURLToPath(new URL('../../../../docs/fleet/mosquitto-acl.conf', import.meta.url));
const onMosquitto = process.env.QRVEND_TEST_BROKER === 'mosquitto';
const PREFIX = 'qrvend'; // the documented ACL names this prefix
const MACHINE = 'RIG-TERMINAL-1';
const T = { timeout: TEST_DEADLINE_MS };
const NOT_AUTHORIZED = 0x87;
const USERS = [
  { username: MACHINE, password: 'pw-machine-m1' },
  { username: 'qrvend-operator', password: 'pw-operator-o1' },
  { username: 'qrvend-relay', password: 'pw-relay-r1' },
  { username: 'broker-admin', password: 'pw-admin-a1' },
];
/**
 * Only for this test: an administrator of the broker, who can write
 * anywhere (the ACL cannot stop a broker's own admin).
 */
const ADMIN_ACL = '\nuser broker-admin\ntopic readwrite qrvend/#\n';

let broker: TestBroker;
let rig: Rig;
let relay: Relay;
let kit: TrustKit;
/** The operator account; on mosquitto the documented ACL denies it the machine's topics. */
let operator: MqttClient;
/** Who gets a forgery to the relay: the operator on aedes (no ACL), the broker's admin on mosquitto. */
let forger: MqttClient;
/** What the forger answers to the next cmd/start it sees (null: nothing). */
let forging: { verdict: 'Declined' | 'Approved'; by: MqttClient } | null = null;
const denied: string[] = [];
/** 5 where the broker speaks it (mosquitto), else 3.1.1 (aedes): the correlation id then travels in the body only. */
let protocolVersion: 4 | 5 = 5;

const password = (username: string) => USERS.find((u) => u.username === username)!.password;
const login = (username: string) =>
  mqtt.connectAsync(broker.url, {
    protocolVersion,
    clientId: `forged-${username}`,
    reconnectPeriod: 0,
    ...(onMosquitto ? { username, password: password(username) } : {}),
  });
const topic = (what: string) => `${PREFIX}/${MACHINE}/${what}`;
const refused = () => {
  const link: Partial<ReturnType<Relay['stats']>['link']> = relay.stats().link;
  return { statusRefused: link.statusRefused ?? {}, repliesRefused: link.repliesRefused ?? {} };
};
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

function machineOnline(): boolean {
  const found = relay.link.directory.find(rig.terminalId, undefined);
  return found.kind === 'found' && found.machine.online && found.machine.acceptsRelayedStart;
}

/** Publishes as `client`; the operator's publish on mosquitto must be refused by the broker. */
async function forge(
  client: MqttClient,
  where: string,
  payload: string,
  options: { retain?: boolean; correlationData?: Buffer } = {},
): Promise<void> {
  const publish = client.publishAsync(where, payload, {
    qos: 1,
    retain: options.retain === true,
    ...(options.correlationData && protocolVersion === 5
      ? { properties: { correlationData: options.correlationData } }
      : {}),
  });
  if (onMosquitto && client === operator) {
    await assert.rejects(
      publish,
      (err: unknown) => (err as { code?: number }).code === NOT_AUTHORIZED,
      `the operator account may not write ${where}`,
    );
    denied.push(where);
    return;
  }
  await publish;
}

/** Answers a Start it read on cmd/start, as the machine would (the correlation id is readable there). */
function onStart(_topic: string, payload: Buffer, packet: IPublishPacket): void {
  const plan = forging;
  if (plan === null) return;
  forging = null;
  const request = JSON.parse(payload.toString('utf8')) as { correlationId: string; args: { body: string } };
  const transactionId = (JSON.parse(request.args.body) as { TransactionId: string }).TransactionId;
  const status =
    plan.verdict === 'Approved'
      ? { Verdict: 'Approved' }
      : { Verdict: 'Declined', Code: 30, StatusMessage: 'machine not responding' };
  const reply = {
    ok: true,
    machineId: MACHINE,
    command: 'start',
    correlationId: request.correlationId,
    result: {
      httpStatus: 200,
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify({ Status: status, TransactionId: transactionId }),
    },
  };
  void forge(plan.by, topic('replies'), JSON.stringify(reply), {
    correlationData: packet.properties?.correlationData ?? Buffer.from(request.correlationId),
  });
}

function startThrough(transactionId?: string): Promise<StartResult> {
  return sendStart({
    url: relay.origin,
    integratorName: rig.integratorName,
    secretToken: rig.secretToken,
    terminalId: rig.terminalId,
    ...(transactionId ? { transactionId } : {}),
    timeoutMs: 10_000,
  });
}

/**
 * A relayed Start the machine takes, a vend, the session closed and
 * settled: the machine's own Approved reached the wallet.
 */
async function saleThrough(): Promise<string> {
  const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
  opened.catch(() => {});
  const start = await startThrough();
  assert.equal(start.outcome.kind, 'approved', `the machine's own answer: ${JSON.stringify(start.outcome)}`);
  await opened;
  await buy(rig, 12, 1.5);
  assert.ok(rig.vmc.endSession());
  await waitTx(rig, start.transactionId, (t) => t.state === 'settled', 'the Settlement');
  await vmcIdle(rig);
  return start.transactionId;
}

before(async () => {
  if (onMosquitto) {
    const { startMosquitto } = await import('../../../rigs/broker/mosquitto-broker.js');
    broker = await startMosquitto({ users: USERS, acl: readFileSync(ACL_FILE, 'utf8') + ADMIN_ACL });
  } else {
    broker = await startAedesBroker();
  }
  protocolVersion = broker.protocolVersions.includes(5) ? 5 : 4;
  kit = createTrustKit({
    machines: [{ machineId: MACHINE, terminalId: MACHINE, uniQr: 'RIG-UNIQR-1' }],
    integratorName: 'rig-wallet',
  });
  const secret = (name: string, text: string) => {
    const file = join(kit.dir, name);
    writeFileSync(file, `${text}\n`, { mode: 0o600 });
    return file;
  };
  const account = (username: string): Record<string, string> =>
    onMosquitto ? { username, passwordFile: secret(`${username}.password`, password(username)) } : {};
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: {
      start: { listen: null },
      fleet: {
        url: broker.url,
        topicPrefix: PREFIX,
        machineId: MACHINE,
        protocolVersion,
        trustFile: kit.machineTrustFile,
        machineKeyFile: kit.machineKeyFile(MACHINE),
        ...account(MACHINE),
      },
    },
  });
  kit.writeToken(rig.secretToken);
  await rig.startAgent();
  const relayBroker = {
    url: broker.url,
    topicPrefix: PREFIX,
    protocolVersion,
    clientId: 'relay-forged',
    ...account('qrvend-relay'),
  };
  relay = await startRelay(
    validateRelayConfig(
      { relay: { listen: '127.0.0.1:0', broker: relayBroker, timeoutMs: 3_000, ...kit.relayConfig() } },
      'test',
    ),
    silentLogger(),
  );
  await until(machineOnline, 15_000, 'the relay to believe the machine online').catch((err) => {
    throw new Error(
      `${(err as Error).message}: ${JSON.stringify(relay.stats().link)} ` +
        `${JSON.stringify(rig.agent?.logs.filter((l) => l.level !== 'info' && l.level !== 'debug').slice(-5))}`,
    );
  });
  operator = await login('qrvend-operator');
  forger = onMosquitto ? await login('broker-admin') : operator;
  // Operators read the whole prefix, cmd/start included.
  for (const c of new Set([operator, forger])) {
    c.on('message', (t, p, packet) => (t === topic('cmd/start') ? onStart(t, p, packet) : undefined));
    await c.subscribeAsync(topic('cmd/start'), { qos: 1 });
  }
});

after(async () => {
  for (const c of [operator, forger]) await c?.endAsync(true).catch(() => {});
  await relay?.close();
  await rig?.close();
  await broker?.close();
  kit?.remove();
});

test(
  'a forged offline status (unsigned, or signed by a key not the ' +
    "machine's) moves nothing: refused, counted, the machine still sells",
  T,
  async () => {
    const before = { ...refused().statusRefused };
    await forge(operator, topic('status'), '{"online":false}', { retain: true });
    // A key of the forger's own, made as keygen makes a machine key: not the one in the registry.
    const own = generateMachineKey();
    const stranger = new MachineSigner(MACHINE, own.entry.id, createPrivateKey(own.privatePem));
    stranger.nextConnection();
    const offline = {
      online: false,
      machineSig: stranger.status(
        { online: false, acceptsRelayedStart: false, terminalId: null, uniQr: null },
        Date.now(),
      ),
    };
    await forge(forger, topic('status'), '{"online":false}', { retain: true });
    await forge(forger, topic('status'), JSON.stringify(offline), { retain: true });
    // The forgeries reached the relay once it counted the last one, or (a relay
    // that believes them) once it saw the machine gone.
    await until(
      () => (refused().statusRefused['unknown-key'] ?? 0) > (before['unknown-key'] ?? 0) || !machineOnline(),
      10_000,
      'the forged statuses at the relay',
    );
    assert.ok(machineOnline(), 'the relay still believes the machine online');
    await saleThrough();
    assert.ok(
      (refused().statusRefused['unsigned'] ?? 0) > (before['unsigned'] ?? 0),
      JSON.stringify(refused().statusRefused),
    );
    if (onMosquitto) assert.ok(denied.includes(topic('status')));
  },
);

test(
  "a forged Declined for a Start the machine holds is refused and counted; the machine's Approved reaches the wallet",
  T,
  async () => {
    const before = sum(refused().repliesRefused);
    if (onMosquitto) {
      forging = { verdict: 'Declined', by: operator };
      await saleThrough();
      assert.ok(denied.includes(topic('replies')), 'the operator account may not write replies');
    }
    forging = { verdict: 'Declined', by: forger };
    const txId = await saleThrough();
    assert.equal(tx(rig, txId)?.requests.Authorization, 1);
    assert.equal(forging, null, 'the forger answered');
    await until(() => sum(refused().repliesRefused) > before, 10_000, 'the forged reply counted');
    assert.ok((refused().repliesRefused['unsigned'] ?? 0) >= 1, JSON.stringify(refused().repliesRefused));
    assert.equal(relay.stats().server.byOutcome['machine'] !== undefined, true);
  },
);

test(
  "a forged Approved for a Start the machine refuses is refused and counted; the wallet gets the machine's Declined",
  T,
  async () => {
    const used = await saleThrough();
    const before = sum(refused().repliesRefused);
    forging = { verdict: 'Approved', by: forger };
    const replay = await startThrough(used); // the machine refuses a TransactionId it has seen: 996
    assert.equal(
      replay.outcome.kind,
      'declined',
      `the wallet must not be told "paid": ${JSON.stringify(replay.outcome)}`,
    );
    assert.equal(replay.outcome.kind === 'declined' && replay.outcome.code, 996);
    assert.equal(forging, null, 'the forger answered');
    await until(() => sum(refused().repliesRefused) > before, 10_000, 'the forged reply counted');
    assert.equal(tx(rig, used)?.requests.Authorization, 1, 'nothing more authorized');
    const health = (await (
      await fetch(new URL('/healthz', relay.origin), { signal: AbortSignal.timeout(5_000) })
    ).json()) as { refused: { status: Record<string, number>; replies: Record<string, number> } };
    assert.ok(sum(health.refused.replies) >= 2 && sum(health.refused.status) >= 2, JSON.stringify(health.refused));
  },
);
