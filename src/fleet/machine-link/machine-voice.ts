/**
 * What the machine says for itself on the fleet link, signed with its own key (`fleet.machineKeyFile`,
 * src/trust/machine-key.ts): its retained status, the last will of each connection, its goodbye and
 * its command replies. The Start relay believes nothing else (docs/relay.md, "What the relay
 * believes"); operators' tools read the same messages and ignore the signature.
 */
import type { MqttClient } from 'mqtt';
import type { QrvendConfig } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import { loadMachineKey } from '../../trust/machine-key.js';
import { MachineSigner, type ReplyFacts } from '../../trust/machine-sig.js';
import { MAX_PAYLOAD_BYTES, type CommandReply, type StatusMessage } from '../contract/messages.js';

type OnlineStatus = Extract<StatusMessage, { online: true }>;

export interface MachineVoice {
  /** Arms the signed last will of the connection about to open (call before each CONNECT). */
  armWill(client: MqttClient, statusTopic: string): void;
  status(status: OnlineStatus): StatusMessage;
  goodbye(): StatusMessage;
  /** The reply's text, signed when it still fits one fleet message. */
  reply(body: CommandReply): string;
}

/** null when no machine key is configured or it cannot be used (checked at start: doctor/start-checks.ts). */
export function machineVoice(
  fleet: QrvendConfig['fleet'],
  machineId: string,
  wallNow: () => number,
  log: Logger,
): MachineVoice | null {
  if (fleet.machineKeyFile === null || fleet.url === null) return null;
  let signer: MachineSigner;
  try {
    const { keyId, key } = loadMachineKey(fleet.machineKeyFile);
    signer = new MachineSigner(machineId, keyId, key);
  } catch (err) {
    const fields = { event: 'fleet.machine-key.unusable', err: (err as Error).message };
    log.error(fields, 'machine key unusable: nothing is signed, the Start relay refuses this machine');
    return null;
  }
  const offline = { online: false, acceptsRelayedStart: false, terminalId: null, uniQr: null };
  return {
    armWill(client, statusTopic) {
      // mqtt.js builds each CONNECT from client.options, after 'reconnect' is emitted.
      signer.nextConnection();
      const will = { online: false, machineSig: signer.will(wallNow()) } satisfies StatusMessage;
      client.options.will = { topic: statusTopic, payload: Buffer.from(JSON.stringify(will)), qos: 1, retain: true };
    },
    status(status) {
      const { acceptsRelayedStart, terminalId, uniQr } = status;
      const facts = { online: true, acceptsRelayedStart, terminalId, uniQr };
      return { ...status, machineSig: signer.status(facts, wallNow()) };
    },
    goodbye() {
      return { online: false, machineSig: signer.status(offline, wallNow()) };
    },
    reply(body) {
      const { machineId: _m, machineSig: _s, ...facts } = body;
      const text = JSON.stringify({ ...body, machineSig: signer.reply(facts as ReplyFacts, wallNow()) });
      // The signature adds a few hundred bytes; a reply that no longer fits goes unsigned (the relay then answers 30).
      return Buffer.byteLength(text) <= MAX_PAYLOAD_BYTES ? text : JSON.stringify(body);
    },
  };
}
