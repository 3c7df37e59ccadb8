/**
 * Operator command traffic for the vend benchmarks (docs/decisions/fleet-trust.md: "the vend path untouched with signed
 * commands flowing"): a client on the broker sends this machine signed `ping`s and `outbox.list`s,
 * and as many commands signed by a key it does not trust, each at `perSecond`. Every one of them
 * costs the fleet worker a parse and an Ed25519 check (the forged ones too), and the signed ones a
 * nonce write; none may reach the machine loop's time. Loopback only; stops when told.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type MqttClient } from 'mqtt';
import { generateSigningKey, loadPrivateKey } from '../../src/trust/keys.js';
import { signStatement } from '../../src/trust/signed.js';
import { writeFileAtomic } from '../../src/core/durable-file.js';
import { COMMAND_STATEMENT_KIND, commandStatement } from '../../src/fleet/contract/scopes.js';
import { machineTopics } from '../../src/fleet/contract/topics.js';

export interface CommandTraffic {
  /** The machine's trust file (the operator's public key): give it to the daemon as fleet.trustFile. */
  trustFile: string;
  start(brokerUrl: string, prefix: string, machineId: string, perSecond: number): Promise<void>;
  stop(): Promise<{ sent: number; answered: number; refused: number }>;
}

export function commandTraffic(): CommandTraffic {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-bench-keys-'));
  const ops = generateSigningKey();
  const stranger = generateSigningKey();
  const trustFile = join(dir, 'fleet-trust.json');
  writeFileAtomic(
    trustFile,
    JSON.stringify({ keys: [{ id: 'bench-ops', publicKey: ops.publicKey, scopes: ['read'] }] }),
    0o644,
  );
  writeFileAtomic(join(dir, 'ops.pem'), ops.privatePem, 0o600);
  writeFileAtomic(join(dir, 'stranger.pem'), stranger.privatePem, 0o600);
  const opsKey = loadPrivateKey(join(dir, 'ops.pem'));
  const strangerKey = loadPrivateKey(join(dir, 'stranger.pem'));
  let client: MqttClient | null = null;
  let timer: NodeJS.Timeout | null = null;
  const counts = { sent: 0, answered: 0, refused: 0 };
  return {
    trustFile,
    async start(brokerUrl, prefix, machineId, perSecond) {
      const topics = machineTopics(prefix, machineId);
      const replyTo = `bench/replies/${randomUUID()}`;
      client = await connectAsync(brokerUrl);
      await client.subscribeAsync(replyTo, { qos: 1 });
      client.on('message', (_t, payload) => {
        const reply = JSON.parse(payload.toString()) as { ok: boolean };
        if (reply.ok) counts.answered += 1;
        else counts.refused += 1;
      });
      let i = 0;
      timer = setInterval(
        () => {
          const name = i % 2 === 0 ? 'ping' : 'outbox.list';
          const args = {};
          const body = commandStatement(machineId, name, args);
          const signed = signStatement(COMMAND_STATEMENT_KIND, body, {
            keyId: 'bench-ops',
            key: opsKey,
            nowMs: Date.now(),
          });
          const forged = signStatement(COMMAND_STATEMENT_KIND, body, {
            keyId: 'bench-ops',
            key: strangerKey,
            nowMs: Date.now(),
          });
          for (const signature of [signed, forged]) {
            client!.publish(
              topics.command(name),
              JSON.stringify({ replyTo, correlationId: String(i), args, signature }),
              { qos: 0 },
            );
            counts.sent += 1;
          }
          i += 1;
        },
        Math.max(1, Math.round(1000 / perSecond)),
      );
    },
    async stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      const c = client;
      client = null;
      await c?.endAsync(true);
      rmSync(dir, { recursive: true, force: true });
      return { ...counts };
    },
  };
}

function connectAsync(url: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = connect(url, {
      protocolVersion: 4,
      clientId: `bench-operator-${randomUUID().slice(0, 8)}`,
      reconnectPeriod: 0,
    });
    c.once('connect', () => resolve(c));
    c.once('error', reject);
  });
}
