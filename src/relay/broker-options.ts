/**
 * The MQTT options of the relay's broker link (broker-link.ts): TLS files, the password file and
 * the inbound packet bound, read from `relay.broker` (docs/relay.md).
 */
import { readFileSync } from 'node:fs';
import type { IClientOptions } from 'mqtt';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { refuseExposedSecret } from '../config/file-modes.js';
import { maxPacketProperties } from '../fleet/packet-bound.js';
import type { RelayConfig } from './config.js';

function readSecretFile(file: string, what: string, key: string): Buffer {
  refuseExposedSecret(file, what, ErrorCodes.CONFIG_UNREADABLE, key);
  return readFile(file, what, key, `check ${key} and that the relay's user can read the file`);
}

function readFile(file: string, what: string, key: string, hint = `check ${key}`): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CONFIG_UNREADABLE,
      `${what} ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      { hint, details: { file } },
    );
  }
}

export function mqttOptionsOf(broker: RelayConfig['broker'], clientId: string): IClientOptions {
  const options: IClientOptions = {
    clientId,
    protocolVersion: broker.protocolVersion,
    clean: true,
    keepalive: broker.keepaliveS,
    connectTimeout: broker.connectTimeoutMs,
    reconnectPeriod: 1_000,
    // A Start is never queued while the broker is away: the wallet gets 30 at once instead.
    queueQoSZero: false,
    resubscribe: true,
    // A 200 MB status must never reach this process (docs/decisions/fleet-trust.md item 11; src/fleet/packet-bound.ts).
    properties: maxPacketProperties(broker.protocolVersion),
  };
  if (broker.caFile !== null) options.ca = readFile(broker.caFile, 'broker CA file', 'relay.broker.caFile');
  if (broker.certFile !== null && broker.keyFile !== null) {
    options.cert = readFile(broker.certFile, 'broker client certificate', 'relay.broker.certFile');
    options.key = readSecretFile(broker.keyFile, 'broker client key', 'relay.broker.keyFile');
  }
  if (broker.username !== null && broker.passwordFile !== null) {
    options.username = broker.username;
    options.password = readSecretFile(broker.passwordFile, 'broker password file', 'relay.broker.passwordFile')
      .toString('utf8')
      .trim();
  }
  return options;
}
