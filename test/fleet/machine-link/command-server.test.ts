/**
 * The command server's intake (src/fleet/machine-link/intake.ts, held-starts.ts; docs/security.md
 * "Budgets per source"), in process: a fake MQTT client collects the replies, a fake payment side
 * answers, the monotonic clock stands still (every message of a flood arrives in the same instant,
 * the worst case for any bucket). The same floods through the real daemon and mosquitto with the
 * documented ACL: test/fleet/e2e/intake-flood.test.ts, test/relay/e2e/confirm-flood.test.ts.
 *
 * Before: one intake budget (300, burst 300) was spent before anything was parsed, so 1,500
 * messages naming unknown keys left an operator's signed reader.disable unread; and the `start`
 * budget (burst 40) was shared by `cmd/start` and `start.confirm`, so junk on start.confirm dropped
 * the relay's genuine confirmation of a Start the machine held.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IPublishPacket, MqttClient } from 'mqtt';
import { loadConfig } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/core/log.js';
import { machineTopics, type CommandName } from '../../../src/fleet/contract/topics.js';
import { CommandServer } from '../../../src/fleet/machine-link/command-server.js';
import type { FleetToPayment } from '../../../src/ipc/messages.js';
import { voucherSignerOf } from '../../../src/relay/voucher.js';
import { keyringOf, rawPublicKey } from '../../../src/trust/keys.js';
import { signCommand, testKey } from '../support/operator-keys.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const MACHINE = 'M-INTAKE-1';
const PREFIX = 'qrvend';
const ops = testKey('ops', ['read', 'operate']);
const relayKey = testKey('relay-1', ['start']);
const relay = voucherSignerOf('relay-1', relayKey.key);
const topics = machineTopics(PREFIX, MACHINE);
const packet = { retain: false } as IPublishPacket;

interface Rig {
  server: CommandServer;
  /** What the payment side was asked, by command name. */
  asked: string[];
  /** The args it was asked with, in the same order. */
  askedArgs: unknown[];
  replies: Array<{ topic: string; body: { correlationId: string | null; ok: boolean; error?: { code: string } } }>;
  send(name: CommandName, body: unknown): Promise<void>;
}

function rig(t: { after: (fn: () => void) => void }, answer: (name: string, args: unknown) => unknown): Rig {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-intake-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const base = loadConfig({ env: {} }).config;
  const config = {
    ...base,
    fleet: { ...base.fleet, machineId: MACHINE, topicPrefix: PREFIX, configOverlay: join(dir, 'fleet-config.json') },
  };
  const keys = [ops, relayKey].map((k) => ({ id: k.keyId, publicKey: rawPublicKey(k.publicKey), scopes: k.scopes }));
  const asked: string[] = [];
  const askedArgs: unknown[] = [];
  const replies: Rig['replies'] = [];
  const client = {
    publish(topic: string, text: string, _o: unknown, done: () => void) {
      replies.push({ topic, body: JSON.parse(text) as Rig['replies'][number]['body'] });
      done();
    },
  } as unknown as MqttClient;
  const server: CommandServer = new CommandServer({
    config,
    machineId: MACHINE,
    topics,
    log: silentLogger(),
    trust: { keyring: keyringOf({ keys }, null), problem: null },
    voice: null,
    local: { config, configFile: null, version: 'test', startedAt: 'x', log: silentLogger(), restart: () => {} },
    updates: () => null,
    client: () => client,
    alarms: () => [],
    toPayment(message: FleetToPayment) {
      if (message.type !== 'fleet.command') return;
      asked.push(message.name);
      askedArgs.push(message.args);
      const result = answer(message.name, message.args);
      queueMicrotask(() => server.paymentReplied({ type: 'fleet.reply', id: message.id, ok: true, result }));
    },
    monotonicNow: () => 1_000,
    wallNow: () => Date.now(),
  });
  const send = (name: CommandName, body: unknown) =>
    server.onCommand(topics.command(name), Buffer.from(JSON.stringify(body)), packet);
  return { server, asked, askedArgs, replies, send };
}

test('1,500 commands naming unknown keys, an operator signed reader.disable, 1,500 more: it runs', T, async (t) => {
  const r = rig(t, () => ({}));
  const junk = (i: number) => {
    const forged = { ...signCommand(ops, MACHINE, 'ping', {}), keyId: `nobody-${i}` };
    return r.send('ping', { replyTo: topics.replies, correlationId: `junk-${i}`, signature: forged });
  };
  const work: Array<Promise<void>> = [];
  for (let i = 0; i < 1_500; i++) work.push(junk(i));
  const disable = { correlationId: 'operator', args: {}, signature: signCommand(ops, MACHINE, 'reader.disable', {}) };
  work.push(r.send('reader.disable', disable));
  for (let i = 1_500; i < 3_000; i++) work.push(junk(i));
  await Promise.all(work);
  assert.deepEqual(r.asked, ['reader.disable']);
  const answer = r.replies.find((x) => x.body.correlationId === 'operator');
  assert.equal(answer?.body.ok, true, JSON.stringify(answer));
  const { droppedBy, byKey } = r.server.dropped() as {
    droppedBy: Record<string, number>;
    byKey: Record<string, { dropped: number }>;
  };
  // The flood spent its own share, and nothing of the trusted keys'.
  assert.ok(droppedBy.untrusted! > 2_500, JSON.stringify(droppedBy));
  assert.equal(droppedBy.trusted, 0);
  assert.equal(byKey.ops?.dropped ?? 0, 0);
});

test("junk naming the relay's key on its topics spends the relay's share, never the operators'", T, async (t) => {
  const r = rig(t, () => ({}));
  const work: Array<Promise<void>> = [];
  // The relay's key id is no secret (every cmd/start shows it): junk may name it.
  const junk = { txId: 't', startNonce: 'n'.repeat(22), voucher: { keyId: 'relay-1', sig: 'x' } };
  for (let i = 0; i < 500; i++) work.push(r.send('start.confirm', { correlationId: `claim-${i}`, args: junk }));
  const disable = { correlationId: 'op', signature: signCommand(ops, MACHINE, 'reader.disable', {}) };
  work.push(r.send('reader.disable', disable));
  await Promise.all(work);
  assert.ok(r.asked.includes('reader.disable'));
  const { droppedBy } = r.server.dropped() as { droppedBy: Record<string, number> };
  assert.ok(droppedBy.start! >= 400, JSON.stringify(droppedBy));
  assert.equal(droppedBy.trusted, 0);
});

/** A relayed Start the fake payment side answers Approved (and so holds); returns its voucher nonce. */
async function heldStart(r: Rig, txId: string): Promise<string> {
  const body = JSON.stringify({ TransactionId: txId });
  const args = relay.start(MACHINE, { integratorName: 'wallet', body, client: '198.51.100.7' }, 5_000, Date.now());
  await r.send('start', { correlationId: `start-${txId}`, args });
  assert.ok(r.asked.includes('start'));
  return args.voucher.nonce;
}

const approved = (name: string) =>
  name === 'start'
    ? {
        httpStatus: 200,
        contentType: 'application/json',
        body: JSON.stringify({ Status: { Verdict: 'Approved' }, TransactionId: 'tx-held-1' }),
      }
    : { authorized: 'tx-held-1' };

test(
  "junk on start.confirm, then the relay's confirmation of the held Start: it reaches the payment side",
  T,
  async (t) => {
    const r = rig(t, approved);
    const nonce = await heldStart(r, 'tx-held-1');
    const work: Array<Promise<void>> = [];
    for (let i = 0; i < 600; i++) {
      const junkArgs = { txId: 'tx-held-1', startNonce: `junk-${i}-aaaaaaaaaaaaaaaaaaaa`, voucher: { keyId: 'x' } };
      work.push(r.send('start.confirm', { correlationId: `junk-${i}`, args: junkArgs }));
    }
    // Forged for the held Start itself (its nonce read on cmd/start), in the relay's name: checked, refused.
    for (let i = 0; i < 50; i++) {
      const forged = {
        ...(relay.confirm(MACHINE, 'tx-held-1', nonce, Date.now()).voucher as object),
        sig: 'A'.repeat(86) + '==',
      };
      work.push(
        r.send('start.confirm', {
          correlationId: `forged-${i}`,
          args: { txId: 'tx-held-1', startNonce: nonce, voucher: forged },
        }),
      );
    }
    await Promise.all(work);
    const genuine = relay.confirm(MACHINE, 'tx-held-1', nonce, Date.now());
    await r.send('start.confirm', { correlationId: 'genuine', args: genuine });
    // What counts: the relay's confirmation reached the payment side (it authorizes), and nothing else for that Start.
    const forHeld = r.askedArgs.filter((a) => (a as { startNonce?: string }).startNonce === nonce);
    assert.deepEqual(forHeld, [genuine]);
    // Junk that names no trusted key is refused by the fleet worker: the payment side's time is the sales'.
    assert.deepEqual(r.asked, ['start', 'start.confirm']);
    // Junk for no held Start spent the untrusted share (beyond it: dropped), never the relay's.
    const { droppedBy } = r.server.dropped() as { droppedBy: Record<string, number> };
    assert.ok(droppedBy.untrusted! >= 400, JSON.stringify(droppedBy));
    assert.equal(droppedBy.start, 0);
    assert.equal(r.replies.find((x) => x.body.correlationId === 'genuine')?.body.ok, true);
  },
);

test('a confirmation for no Start held here goes through the intake shares like any message', T, async (t) => {
  const r = rig(t, approved);
  const args = relay.confirm(MACHINE, 'tx-never', 'n'.repeat(22), Date.now());
  await r.send('start.confirm', { correlationId: 'stray', args });
  // Passed on (the payment side is the one that says "not held"), having spent the relay's share.
  assert.deepEqual(r.asked, ['start.confirm']);
});

test("after a junk flood, an operator's refused command still gets its answer (refusals per source)", T, async (t) => {
  const r = rig(t, () => ({}));
  const work: Array<Promise<void>> = [];
  for (let i = 0; i < 300; i++) work.push(r.send('ping', { correlationId: `junk-${i}`, signature: { keyId: 'x' } }));
  await Promise.all(work);
  // A key of the trust file, out of its scope: refused, and told why.
  await r.send('config.set', { correlationId: 'op', args: {}, signature: signCommand(ops, MACHINE, 'config.set', {}) });
  const answer = r.replies.find((x) => x.body.correlationId === 'op');
  assert.equal(answer?.body.error?.code, 'UNAUTHORIZED', JSON.stringify(answer));
});
