/**
 * What every `qrvend fleet` subcommand shares: the broker connection options and flags, number
 * and usage checks, the signing key of a command. Apart from fleet.ts so the subcommand files
 * (fleet.ts, fleet-watch.ts, fleet-update.ts) import it without importing each other.
 */
import { Option, type Command } from 'commander';

/** Connection options of every `qrvend fleet` subcommand; each also reads a QRVEND_FLEET_* variable. */
export interface ConnectionFlags {
  url?: string;
  prefix: string;
  ca?: string;
  cert?: string;
  key?: string;
  username?: string;
  passwordFile?: string;
  protocol: 'auto' | '4' | '5';
  connectTimeout: string;
}

export function addConnectionOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--url <url>', 'the broker: mqtt://HOST:PORT or mqtts://HOST:PORT').env('QRVEND_FLEET_URL'))
    .addOption(
      new Option('--prefix <prefix>', 'topic prefix of the fleet (fleet.topicPrefix on the machines)')
        .env('QRVEND_FLEET_PREFIX')
        .default('qrvend'),
    )
    .addOption(
      new Option('--ca <file>', "CA certificate (PEM) that signed the broker's certificate").env('QRVEND_FLEET_CA'),
    )
    .addOption(new Option('--cert <file>', 'client certificate (PEM)').env('QRVEND_FLEET_CERT'))
    .addOption(new Option('--key <file>', 'client key (PEM)').env('QRVEND_FLEET_KEY'))
    .addOption(new Option('--username <name>', 'user name on the broker').env('QRVEND_FLEET_USERNAME'))
    .addOption(
      new Option('--password-file <file>', 'file holding the password (one line; never given on the command line)').env(
        'QRVEND_FLEET_PASSWORD_FILE',
      ),
    )
    .addOption(
      new Option('--protocol <version>', 'MQTT version: 5, 4 (3.1.1), or auto (5, else 4)')
        .choices(['auto', '4', '5'])
        .env('QRVEND_FLEET_PROTOCOL')
        .default('auto'),
    )
    .addOption(new Option('--connect-timeout <ms>', 'how long to wait for the broker').default('10000'));
}

export function wholeNumber(value: string, what: string, min: number, max: number): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new Error(`${what} must be a whole number from ${min} to ${max}, got "${value.slice(0, 32)}"`);
  }
  return Number(value);
}

export async function connect(
  flags: ConnectionFlags,
  purpose: string,
  reconnectMs?: number,
  more: { session?: string; beforeConnect?: (client: import('mqtt').MqttClient) => void } = {},
) {
  const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
  const { connectFleet } = await import('../../fleet/operator/index.js');
  if (flags.url === undefined)
    throw new QrvendError(ErrorCodes.CLI_USAGE, 'no broker: give --url or set QRVEND_FLEET_URL');
  let connectTimeoutMs: number;
  try {
    connectTimeoutMs = wholeNumber(flags.connectTimeout, '--connect-timeout', 100, 120_000);
  } catch (err) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, (err as Error).message);
  }
  return connectFleet(
    {
      url: flags.url,
      prefix: flags.prefix,
      caFile: flags.ca,
      certFile: flags.cert,
      keyFile: flags.key,
      username: flags.username,
      passwordFile: flags.passwordFile,
      protocol: flags.protocol,
      connectTimeoutMs,
    },
    { purpose, reconnectMs, ...more },
  );
}

export async function usage<T>(make: () => T): Promise<T> {
  try {
    return make();
  } catch (err) {
    const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
    throw new QrvendError(ErrorCodes.CLI_USAGE, (err as Error).message);
  }
}

/** The signing key of `fleet cmd`, when one is given: both flags or neither. */
export const SIGNATURE_FORMAT_HELP =
  '2 (default): the key id is signed; 1: as older releases sign, only for machines still on one (docs/security.md)';

/** The signing key of `fleet cmd`, when one is given: both flags or neither. */
export async function signerOf(flags: { signKey?: string; keyId?: string; signatureFormat?: string }, ttlS: number) {
  const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
  if (flags.signKey === undefined && flags.keyId === undefined) return undefined;
  if (flags.signKey === undefined || flags.keyId === undefined) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, '--sign-key and --key-id go together');
  }
  const { loadPrivateKey, KEY_ID } = await import('../../trust/keys.js');
  if (!KEY_ID.test(flags.keyId)) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, '--key-id: letters, digits and . _ : - only, 1 to 64');
  }
  const given = flags.signatureFormat ?? '2';
  const format = given === '1' ? 1 : given === '2' ? 2 : undefined;
  if (format === undefined) throw new QrvendError(ErrorCodes.CLI_USAGE, '--signature-format: 1 or 2');
  try {
    return { keyId: flags.keyId, key: loadPrivateKey(flags.signKey), lifetimeMs: ttlS * 1000, format } as const;
  } catch (err) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, (err as Error).message);
  }
}
