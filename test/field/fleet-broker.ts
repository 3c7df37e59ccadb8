/**
 * The fleet side of the field test (docs/decisions/power-cuts.md item 3, "right after a fleet config.set"): Debian's
 * mosquitto with a TLS listener on the host's loopback, the documented ACL loaded as it is
 * (docs/fleet/mosquitto-acl.conf), one account for the machine (its machineId, as the ACL wants)
 * and one for the operator; the guest reaches it through a guestfwd (qemu.ts). The operator is
 * the host: an Ed25519 key in memory, whose public half is the machine's trust file, signing
 * commands sent with the operator module (`qrvend fleet cmd`'s own code).
 *
 * What goes into the guest (the CA, the machine's password, the trust file) is returned as text
 * for the technician's provisioning; the passwords and the private key never reach the console.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMosquitto, type MosquittoBroker } from '../../rigs/broker/mosquitto-broker.js';
import {
  connectFleet,
  decodeFleetMessage,
  sendFleetCommand,
  watchFleet,
  type CommandOutcome,
  type CommandSigner,
  type FleetConnection,
  type FleetView,
} from '../../src/fleet/operator/index.js';
import { machineTopics, type CommandName, type CommandReply, type FleetEvent } from '../../src/fleet/contract/index.js';
import { OPERATOR_SCOPES, signCommand, testKey, writeTrustFile, type TestKey } from '../fleet/support/operator-keys.js';
import { makeServerCert } from './gateway-cert.js';
import { GUEST_BROKER } from './qemu.js';

const ACL_FILE = fileURLToPath(new URL('../../../docs/fleet/mosquitto-acl.conf', import.meta.url));
const OPERATOR_USER = 'qrvend-operator';
const PREFIX = 'qrvend';

export interface FieldFleet {
  broker: MosquittoBroker;
  /** For the guest: the broker's certificate (its CA), the machine's password line, the trust file. */
  guestFiles: { ca: string; password: string; trust: string };
  /**
   * The release key (scope `update`, in the machine's trust file beside the operator's, as
   * docs/updates.md has it): it signs the update manifests and the `update.offer` commands.
   */
  releaseKey: TestKey;
  /** Every event the machine published since the start (`qrvend fleet watch`'s decoding), in order. */
  events: FleetEvent[];
  /** The machines' retained statuses as `qrvend fleet status` reads them. */
  view: FleetView;
  prefix: string;
  /**
   * Another operator connection (e.g. for `qrvend fleet update`'s rollout, which unsubscribes when it ends); the caller
   * ends it.
   */
  connectOperator(purpose: string): Promise<FleetConnection>;
  /**
   * A signed command to the machine, on the operator's connection (signed by the operator's key unless `signer` says
   * otherwise); the reply or a FLEET_NO_REPLY error.
   */
  command(name: string, args: unknown, timeoutMs: number, signer?: CommandSigner): Promise<CommandOutcome>;
  /**
   * A command signed by `signer` and sent as given, the operator's own check of its arguments
   * skipped (`qrvend fleet cmd` refuses, e.g., an unsigned manifest before it leaves): what another
   * tool could send, for the machine's own refusal. The reply, or an error after `timeoutMs`.
   */
  commandUnchecked(name: CommandName, args: unknown, timeoutMs: number, signer: TestKey): Promise<CommandReply>;
  close(): Promise<void>;
}

export async function startFieldFleet(runDir: string, machineId: string): Promise<FieldFleet> {
  // One certificate for both ends: the guest dials 10.0.2.101, the host's operator 127.0.0.1.
  const tls = makeServerCert(runDir, 'broker', [GUEST_BROKER.host, '127.0.0.1']);
  const machine = { username: machineId, password: randomBytes(18).toString('hex') };
  const operator = { username: OPERATOR_USER, password: randomBytes(18).toString('hex') };
  const broker = await startMosquitto({
    users: [machine, operator],
    acl: readFileSync(ACL_FILE, 'utf8'),
    files: { 'broker-cert.pem': tls.cert, 'broker-key.pem': tls.key },
    config: ({ port, dir, user }) =>
      [
        'per_listener_settings false',
        `listener ${port} 127.0.0.1`,
        `certfile ${join(dir, 'broker-cert.pem')}`,
        `keyfile ${join(dir, 'broker-key.pem')}`,
        'allow_anonymous false',
        `password_file ${join(dir, 'passwd')}`,
        `acl_file ${join(dir, 'acl')}`,
        'persistence false',
        'log_dest stderr',
        'log_type error',
        'log_type warning',
        'connection_messages false',
        `user ${user}`,
        'set_tcp_nodelay true',
        '',
      ].join('\n'),
  });
  let connection: FleetConnection | null = null;
  try {
    const passwordFile = join(runDir, 'fleet-operator-password');
    const connectOperator = async (purpose: string): Promise<FleetConnection> => {
      writeFileSync(passwordFile, `${operator.password}\n`, { mode: 0o600 });
      try {
        return await connectFleet(
          {
            url: `mqtts://127.0.0.1:${broker.port}`,
            prefix: PREFIX,
            caFile: tls.certFile,
            username: OPERATOR_USER,
            passwordFile,
            protocol: '5',
          },
          { purpose },
        );
      } finally {
        // Read at the connect only: the run directory is kept, the password is not.
        rmSync(passwordFile, { force: true });
      }
    };
    connection = await connectOperator('field-test');
    const key: TestKey = testKey('field-operator', OPERATOR_SCOPES);
    const releaseKey: TestKey = testKey('field-release', ['update']);
    const trust = readFileSync(writeTrustFile(runDir, [key, releaseKey], 'fleet-trust.json'), 'utf8');
    const conn = connection;
    const events: FleetEvent[] = [];
    const watch = await watchFleet(conn.client, PREFIX, { onEvent: (_machine, event) => void events.push(event) });
    return {
      broker,
      guestFiles: { ca: tls.cert.toString('utf8'), password: `${machine.password}\n`, trust },
      releaseKey,
      events,
      view: watch.view,
      prefix: PREFIX,
      connectOperator,
      command: (name, args, timeoutMs, signer = key) =>
        // Two minutes of validity: the guest's clock is the host's through the emulated RTC, the margin is for TCG.
        sendFleetCommand(conn.client, {
          prefix: PREFIX,
          machineId,
          name,
          args,
          timeoutMs,
          protocol: conn.protocol,
          signer: { keyId: signer.keyId, key: signer.key, lifetimeMs: 120_000 },
        }),
      async commandUnchecked(name, args, timeoutMs, signer) {
        const topics = machineTopics(PREFIX, machineId);
        const correlationId = randomBytes(16).toString('hex');
        await conn.client.subscribeAsync({ [topics.replies]: { qos: 1 } });
        let onMessage: (topic: string, payload: Buffer) => void = () => {};
        const replied = new Promise<CommandReply>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no reply to ${name} within ${timeoutMs} ms`)), timeoutMs);
          onMessage = (topic, payload) => {
            const decoded = topic === topics.replies ? decodeFleetMessage(PREFIX, topic, payload) : null;
            if (decoded?.kind === 'reply' && decoded.reply.correlationId === correlationId) {
              clearTimeout(timer);
              resolve(decoded.reply);
            }
          };
          conn.client.on('message', onMessage);
        });
        try {
          const signature = signCommand(signer, machineId, name, args, Date.now(), 120_000);
          await conn.client.publishAsync(
            topics.command(name),
            JSON.stringify({ replyTo: topics.replies, correlationId, args, signature }),
            { qos: 1 },
          );
          return await replied;
        } finally {
          conn.client.off('message', onMessage);
        }
      },
      async close() {
        await conn.client.endAsync(true).catch(() => undefined);
        await broker.close();
      },
    };
  } catch (err) {
    await connection?.client.endAsync(true).catch(() => undefined);
    await broker.close();
    throw err;
  }
}
