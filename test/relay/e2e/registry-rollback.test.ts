/**
 * The registry does not roll back across a relay restart (docs/security.md, "Versions kept across
 * restarts"). The operator signs registry v1 [K1], v2 [K1, K2], v3 [K2]: K1, the machine's old key,
 * leaked and was removed. The relay verified v3; v1 is put back in the registry file (a backup
 * restored, or anyone who can write it) and the relay restarted.
 *
 * Before: the relay started on v1 (its only "older" check was against the registry in memory), so
 * whoever held K1 and the machine's broker password had a K1-signed status believed, while the
 * machine's real K2-signed ones were refused. Now the newest version verified is kept in
 * relay.stateDir: the restart is refused (exit 78, VERSION_ROLLBACK naming both versions), and
 * stepping back is the operator's act (`qrvend relay registry step-back`).
 *
 * Through the real daemon (its machine key is K2) and `qrvend relay` (in-process, and as its own
 * process for the exit code), on aedes in `npm test` and on mosquitto with the documented ACL in
 * `npm run fleet-test` (the forger logs in with the machine's own broker password).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mqtt, { type MqttClient } from 'mqtt';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startAedesBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { createTrustKit, type TrustKit } from '../../../rigs/relay/trust-kit.js';
import { isQrvendError } from '../../../src/core/errors.js';
import { silentLogger } from '../../../src/core/log.js';
import { startRelay, validateRelayConfig, type Relay } from '../../../src/relay/index.js';
import { generateMachineKey } from '../../../src/trust/machine-key.js';
import { MachineSigner } from '../../../src/trust/machine-sig.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../../support/deadlines.js';

const ACL_FILE = fileURLToPath(new URL('../../../../docs/fleet/mosquitto-acl.conf', import.meta.url));
const MAIN_JS = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const onMosquitto = process.env.QRVEND_TEST_BROKER === 'mosquitto';
const PREFIX = 'qrvend'; // the documented ACL names this prefix
const MACHINE = 'RIG-TERMINAL-1';
const T = { timeout: TEST_DEADLINE_MS };
const USERS = [
  { username: MACHINE, password: 'pw-machine-r3' },
  { username: 'qrvend-relay', password: 'pw-relay-r3' },
];

let broker: TestBroker;
let rig: Rig;
let kit: TrustKit;
let protocolVersion: 4 | 5 = 5;
let relayConfigFile: string;
let relayConfig: Record<string, unknown>;
const relays: Relay[] = [];
/** The registry file as v1 was signed: what is put back. */
let v1File: Buffer;
/** K1: the machine's old key, leaked; its holder also has the machine's broker password. */
const k1 = generateMachineKey();
const t0 = Date.now() - 60_000;
const signedAt = (ms: number) => new Date(ms).toISOString();
const V1 = t0;
const V3 = t0 + 2_000;

const password = (username: string) => USERS.find((u) => u.username === username)!.password;
function secret(name: string, text: string): string {
  const file = join(kit.dir, name);
  writeFileSync(file, `${text}\n`, { mode: 0o600 });
  return file;
}

/** The registry of this one machine with the keys given, signed at `nowMs`. */
function registry(keys: Array<{ id: string; publicKey: string }>, nowMs: number): void {
  kit.writeRegistry([{ machineId: MACHINE, terminalId: MACHINE, uniQr: 'RIG-UNIQR-1', machineKeys: keys }], { nowMs });
}

async function start(): Promise<Relay> {
  const relay = await startRelay(validateRelayConfig(relayConfig, 'test'), silentLogger());
  relays.push(relay);
  return relay;
}

async function stop(relay: Relay): Promise<void> {
  relays.splice(relays.indexOf(relay), 1);
  await relay.close();
}

const online = (relay: Relay) => {
  const found = relay.link.directory.find(MACHINE, undefined);
  return found.kind === 'found' && found.machine.online;
};

/** What the holder of K1 and the machine's broker password publishes: the machine online, signed by K1. */
async function forgeK1Status(): Promise<void> {
  const client: MqttClient = await mqtt.connectAsync(broker.url, {
    protocolVersion,
    clientId: 'k1-holder',
    reconnectPeriod: 0,
    ...(onMosquitto ? { username: MACHINE, password: password(MACHINE) } : {}),
  });
  try {
    const signer = new MachineSigner(MACHINE, k1.entry.id, createPrivateKey(k1.privatePem));
    signer.nextConnection();
    const facts = { online: true, acceptsRelayedStart: true, terminalId: MACHINE, uniQr: 'RIG-UNIQR-1' };
    const at = new Date().toISOString();
    const status = {
      ...facts,
      machineId: MACHINE,
      version: '1',
      startedAt: at,
      reader: 'enabled',
      readerDisabledRemotely: false,
      gateway: 'online',
      outbox: { pending: 0, dead: 0 },
      alarms: [],
      at,
      machineSig: signer.status(facts, Date.now()),
    };
    await client.publishAsync(`${PREFIX}/${MACHINE}/status`, JSON.stringify(status), { qos: 1 });
  } finally {
    await client.endAsync(true);
  }
}

before(async () => {
  if (onMosquitto) {
    const { startMosquitto } = await import('../../../rigs/broker/mosquitto-broker.js');
    broker = await startMosquitto({ users: USERS, acl: readFileSync(ACL_FILE, 'utf8') });
  } else {
    broker = await startAedesBroker();
  }
  protocolVersion = broker.protocolVersions.includes(5) ? 5 : 4;
  kit = createTrustKit({ machines: [], integratorName: 'rig-wallet' });
  const account = (username: string): Record<string, string> =>
    onMosquitto ? { username, passwordFile: secret(`${username}.password`, password(username)) } : {};
  registry([k1.entry], V1);
  v1File = readFileSync(kit.relayConfig().registryFile);
  relayConfig = {
    relay: {
      listen: '127.0.0.1:0',
      broker: { url: broker.url, topicPrefix: PREFIX, protocolVersion, ...account('qrvend-relay') },
      ...kit.relayConfig(),
    },
  };
  relayConfigFile = join(kit.dir, 'relay.json');
  writeFileSync(relayConfigFile, JSON.stringify(relayConfig));
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
        // K2: the machine's key now.
        machineKeyFile: kit.machineKeyFile(MACHINE),
        ...account(MACHINE),
      },
    },
  });
  await rig.startAgent();
});

after(async () => {
  for (const relay of relays.splice(0)) await relay.close().catch(() => {});
  await rig?.close();
  await broker?.close();
  kit?.remove();
});

test('v1, v2, v3 verified in turn; v1 put back and the relay restarted: refused, naming both versions', T, async () => {
  const k2 = kit.machineKeyEntry(MACHINE);
  let relay = await start();
  // Re-read as on SIGHUP (the file is also polled every 2 s).
  registry([k1.entry, k2], t0 + 1_000);
  assert.equal(relay.registry.reload('v2'), true);
  registry([k2], V3);
  assert.equal(relay.registry.reload('v3'), true);
  await stop(relay);
  // A restart on v3 itself is no rollback: the machine's retained K2-signed status is believed.
  relay = await start();
  await until(() => online(relay), 15_000, "the machine's K2-signed status believed");
  await stop(relay);

  writeFileSync(kit.relayConfig().registryFile, v1File);
  const restarted: Relay | Error = await start().catch((err: Error) => err);
  if (!(restarted instanceof Error)) {
    // Today's code: the relay runs on v1. Show what that gives the holder of K1, then fail.
    relay = restarted;
    await forgeK1Status();
    await until(() => online(relay), 10_000, 'the K1-signed status').catch(() => {});
    const believed = online(relay);
    await stop(relay);
    assert.fail(`the relay started on the registry put back (v1); a K1-signed status believed: ${believed}`);
  }
  assert.ok(isQrvendError(restarted, 'VERSION_ROLLBACK'), String(restarted));
  assert.match(restarted.message, new RegExp(`signed at ${signedAt(V1)}, older than signed at ${signedAt(V3)}`));

  // The relay as its own process, as systemd runs it: exit 78, which the unit does not restart.
  const child = spawnSync(process.execPath, [MAIN_JS, 'relay', '--config', relayConfigFile], {
    encoding: 'utf8',
    timeout: CHILD_DEADLINE_MS,
  });
  assert.equal(child.status, 78, child.stderr);
  assert.match(child.stderr, /VERSION_ROLLBACK: the registry offered is signed at .*, older than signed at/);
  assert.match(child.stderr, /qrvend relay registry step-back/);
});

test("v3 back: the machine's own status believed after the restart, a K1-signed one refused", T, async () => {
  registry([kit.machineKeyEntry(MACHINE)], V3 + 1_000);
  const relay = await start();
  await until(() => online(relay), 15_000, "the machine's retained K2-signed status believed");
  const before = relay.link.stats().statusRefused['unknown-key'] ?? 0;
  await forgeK1Status();
  await until(
    () => (relay.link.stats().statusRefused['unknown-key'] ?? 0) > before,
    10_000,
    'the K1-signed status refused',
  );
  assert.ok(online(relay));
  // Put back while it runs: the re-read is refused and counted, the newer registry stays in force.
  writeFileSync(kit.relayConfig().registryFile, v1File);
  await until(() => relay.registry.state().reloadFailures === 1, 15_000, 'the re-read of v1 refused');
  assert.match(relay.registry.state().lastError ?? '', /older than signed at/);
  assert.equal(relay.registry.state().issuedAt, signedAt(V3 + 1_000));
  assert.ok(online(relay));
  await stop(relay);
});

test('the operator steps back on purpose: qrvend relay registry step-back, then the relay takes v1', T, async () => {
  writeFileSync(kit.relayConfig().registryFile, v1File);
  const stepped = spawnSync(
    process.execPath,
    [MAIN_JS, 'relay', 'registry', 'step-back', '--config', relayConfigFile],
    { encoding: 'utf8', timeout: CHILD_DEADLINE_MS },
  );
  assert.equal(stepped.status, 0, stepped.stderr);
  assert.match(stepped.stdout, new RegExp(`now the one signed at ${signedAt(V1)}`));
  assert.match(stepped.stdout, /it was the one signed at /);
  const relay = await start();
  assert.equal(relay.registry.state().issuedAt, signedAt(V1));
  await stop(relay);
});
