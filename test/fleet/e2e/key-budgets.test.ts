/**
 * One key cannot starve another, and a signature covers the key that signed it (docs/security.md,
 * "Budgets and nonce shares per key", "What a command's signature covers"), through the real
 * daemon (`qrvend run`) and a real MQTT broker (aedes in `npm test`, mosquitto in `npm run fleet-test`):
 * - 80 signed pings from a leaked `read` key, then an operator's signed reader.disable runs, and
 *   health counts the pinger's drops under its key id;
 * - `qrvend fleet cmd` signs the key id; a command signed as an older release signs is refused;
 * - one key's full share of the nonce book refuses that key's next command, not another key's;
 * - a command run under one id and replayed under another id of the same public key (the trust file
 *   renamed it) is refused; a trust file listing one public key under two ids is refused at start.
 *
 * One daemon for the file; the tests run in order and restart it between trust files.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startTestBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { machineTopics } from '../../../src/fleet/contract/topics.js';
import type { CommandReply } from '../../../src/fleet/contract/messages.js';
import { rawPublicKey } from '../../../src/trust/keys.js';
import { PREFIX, protocolFor, startWatcher, type FleetWatcher } from './support/fleet-watcher.js';
import { signCommand, testKey, type TestKey } from '../support/operator-keys.js';
import { runCli } from '../operator/run-cli.js';

const MACHINE = 'M-KEYS-1';
const T = { timeout: 240_000 };
const ops = testKey('ops', ['read', 'operate']);
/** A leaked key that may only read. */
const pinger = testKey('pinger', ['read']);
const topics = machineTopics(PREFIX, MACHINE);

let broker: TestBroker;
let rig: Rig;
let watcher: FleetWatcher;
let scratch: string;
let trustFile: string;

/** The trust file as `entries` say (an id per public key, as the operator wrote it). */
function writeTrust(entries: Array<{ id: string; key: TestKey }>): void {
  const keys = entries.map((e) => ({ id: e.id, publicKey: rawPublicKey(e.key.publicKey), scopes: e.key.scopes }));
  writeFileSync(trustFile, JSON.stringify({ keys }), { mode: 0o644 });
}

before(async () => {
  broker = await startTestBroker();
  scratch = mkdtempSync(join(tmpdir(), 'qrvend-keys-e2e-'));
  trustFile = join(scratch, 'fleet-trust.json');
  writeTrust([
    { id: 'ops', key: ops },
    { id: 'pinger', key: pinger },
  ]);
  rig = await createRig({
    vmc: { vendPolicy: 'manual' },
    config: {
      fleet: {
        url: broker.url,
        topicPrefix: PREFIX,
        machineId: MACHINE,
        protocolVersion: protocolFor(broker),
        healthIntervalS: 5,
        trustFile,
      },
    },
  });
  watcher = await startWatcher(broker.url, protocolFor(broker), MACHINE, ops);
  await rig.startAgent();
  await until(() => watcher.lastStatus()?.online === true, 10_000, 'the retained status online');
});

after(async () => {
  await watcher?.close();
  await rig?.close();
  await broker?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Sends a request with the signature given and waits for its reply. */
function send(name: string, args: unknown, signature: unknown, timeoutMs = 10_000): Promise<CommandReply> {
  const correlationId = randomUUID();
  const payload = JSON.stringify({ replyTo: topics.replies, correlationId, args, signature });
  return watcher.commandRaw(name, payload, correlationId, timeoutMs);
}

function refusedWith(reply: CommandReply, pattern: RegExp): void {
  assert.equal(reply.ok, false, JSON.stringify(reply));
  assert.equal(!reply.ok && reply.error.code, 'UNAUTHORIZED', JSON.stringify(reply));
  assert.match(!reply.ok ? reply.error.message : '', pattern);
}

async function restartAgent(): Promise<void> {
  await rig.stopAgent();
  const seen = watcher.statuses.length;
  await rig.startAgent();
  await until(() => watcher.statuses.slice(seen).some((s) => s.online === true), 10_000, 'online again');
}

const hostEnabled = () => rig.vmc.state().hostEnabled;

test(
  "80 signed pings from a read key, then an operate key's reader.disable runs; health names the pinger",
  T,
  async () => {
    const ids = Array.from({ length: 80 }, (_, i) => `ping-flood-${i}`);
    for (const id of ids) {
      const signature = signCommand(pinger, MACHINE, 'ping', {});
      watcher.publishRaw('ping', JSON.stringify({ replyTo: topics.replies, correlationId: id, signature }));
    }
    const disable = await send('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}));
    assert.equal(disable.ok, true, JSON.stringify(disable));
    await until(() => !hostEnabled(), 10_000, 'the reader disabled');
    const enable = await send('reader.enable', {}, signCommand(ops, MACHINE, 'reader.enable', {}));
    assert.equal(enable.ok, true, JSON.stringify(enable));
    await until(() => hostEnabled(), 10_000, 'the reader enabled again');
    // The pings beyond the pinger's own budget are counted under its key id, none under the operator's.
    type Counts = Record<string, { dropped: number; refused: number }>;
    const byKey = () => watcher.health.at(-1)?.stats?.fleet?.byKey as Counts | undefined;
    await until(() => (byKey()?.pinger?.dropped ?? 0) > 0, 15_000, "health to count the pinger's dropped pings");
    assert.equal(byKey()?.ops?.dropped ?? 0, 0, JSON.stringify(byKey()));
  },
);

test(
  'qrvend fleet cmd signs in format 2 (the key id signed); format 1, as older releases sign, is refused',
  T,
  async () => {
    const keyFile = join(scratch, 'ops.pem');
    writeFileSync(keyFile, ops.privatePem, { mode: 0o600 });
    const common = [MACHINE, 'ping', '--sign-key', keyFile, '--key-id', 'ops', '--json'];
    common.push('--url', broker.url, '--prefix', PREFIX);
    const now = await runCli(['fleet', 'cmd', ...common]);
    assert.equal(now.code, 0, now.stderr + now.stdout);
    const older = await runCli(['fleet', 'cmd', ...common, '--signature-format', '1']);
    assert.equal(older.code, 1, older.stderr + older.stdout);
    assert.match(
      older.stdout,
      /UNAUTHORIZED.*refused \(old-format\): signed in format 1, whose bytes do not name the key/,
    );
    const refusedUnderOps = () => (watcher.health.at(-1)?.stats?.fleet?.byKey?.ops?.refused ?? 0) > 0;
    await until(refusedUnderOps, 15_000, 'health to count the refusal under ops');
  },
);

/** The book's entry for a nonce, as docs/security.md describes the file: `<fingerprint of the public key> <nonce>`. */
const fingerprint = (key: TestKey) =>
  createHash('sha256')
    .update(Buffer.from(rawPublicKey(key.publicKey), 'base64'))
    .digest('base64url');

test("one key's full share of the nonce book refuses that key, not another key's command", T, async () => {
  await rig.stopAgent();
  // The pinger's nonces fill the whole book (4096, the most it ever held for all keys together).
  const book = join(dirname(rig.overlayFile), 'fleet-nonces.json');
  const expiresAt = Date.now() + 10 * 60_000;
  const seen: Record<string, number> = {};
  for (let i = 0; i < 4096; i += 1)
    seen[`${fingerprint(pinger)} pinger-nonce-${String(i).padStart(16, '0')}`] = expiresAt;
  writeFileSync(book, JSON.stringify({ v: 1, floor: 0, seen }), { mode: 0o600 });
  const started = watcher.statuses.length;
  await rig.startAgent();
  await until(() => watcher.statuses.slice(started).some((s) => s.online === true), 10_000, 'online again');
  refusedWith(await send('ping', {}, signCommand(pinger, MACHINE, 'ping', {})), /share|full/);
  const disable = await send('reader.disable', {}, signCommand(ops, MACHINE, 'reader.disable', {}));
  assert.equal(disable.ok, true, JSON.stringify(disable));
  await until(() => !hostEnabled(), 10_000, 'the reader disabled');
  assert.equal((await send('reader.enable', {}, signCommand(ops, MACHINE, 'reader.enable', {}))).ok, true);
  await until(() => hostEnabled(), 10_000, 'the reader enabled again');
});

test(
  'a command replayed under a second id of one public key is refused; a trust file listing it twice is refused',
  T,
  async () => {
    writeTrust([{ id: 'ops-a', key: ops }]);
    await restartAgent();
    const signer = { keyId: 'ops-a', key: ops.key };
    const signature = signCommand(signer, MACHINE, 'reader.disable', {});
    assert.equal((await send('reader.disable', {}, signature)).ok, true);
    await until(() => !hostEnabled(), 10_000, 'the reader disabled');
    assert.equal((await send('reader.enable', {}, signCommand(signer, MACHINE, 'reader.enable', {}))).ok, true);
    await until(() => hostEnabled(), 10_000, 'the reader enabled again');
    // The operator renames the key: the same signed command, now claiming the new id, must not run again.
    writeTrust([{ id: 'ops-b', key: ops }]);
    await restartAgent();
    refusedWith(await send('reader.disable', {}, { ...signature, keyId: 'ops-b' }), /signature|replay/);
    assert.equal(hostEnabled(), true, 'the replay did not disable the reader');
    // One public key under two ids: the file is refused, so nothing signed runs, naming why.
    writeTrust([
      { id: 'ops-a', key: ops },
      { id: 'ops-b', key: ops },
    ]);
    await restartAgent();
    const underB = signCommand({ keyId: 'ops-b', key: ops.key }, MACHINE, 'reader.disable', {});
    refusedWith(await send('reader.disable', {}, underB), /listed twice|no operator key/);
    assert.equal(hostEnabled(), true);
  },
);
