import { Option, type Command } from 'commander';
import { registerFleetKeygen } from './fleet-keygen.js';
import { registerFleetCatalog } from './fleet-catalog.js';
import { registerUpdate } from './fleet-update.js';
import { registerFleetWatch } from './fleet-watch.js';
import {
  addConnectionOptions,
  connect,
  SIGNATURE_FORMAT_HELP,
  signerOf,
  usage,
  wholeNumber,
  type ConnectionFlags,
} from './fleet-connection.js';

interface StatusFlags extends ConnectionFlags {
  json?: boolean;
  settle: string;
  wait: string;
}

interface CmdFlags extends ConnectionFlags {
  json?: boolean;
  timeout: string;
  signKey?: string;
  keyId?: string;
  ttl: string;
  /** 1: sign as releases before the key id was signed do, for machines still on one (docs/security.md). */
  signatureFormat?: string;
}

export function register(parent: Command): void {
  const fleet = parent
    .command('fleet')
    .description(
      "the operator's view of the fleet over its MQTT broker: status, live events, remote commands, staged updates",
    );
  // The order of registration is the order `qrvend fleet --help` lists the subcommands in.
  registerFleetStatus(fleet);
  registerFleetWatch(fleet);
  registerFleetCmd(fleet);
  registerUpdate(fleet);
  registerFleetCatalog(fleet);
  registerFleetKeygen(fleet);
}

function registerFleetStatus(fleet: Command): void {
  addConnectionOptions(
    fleet
      .command('status')
      .description('one line per machine from its retained status: online, reader, gateway, last sale, outbox, alarms')
      .option('--json', 'print one JSON object')
      .option('--settle <ms>', 'done when no new status came for this long', '300')
      .option('--wait <ms>', 'at most this long in all', '10000'),
  ).action(fleetStatus);
}

async function fleetStatus(flags: StatusFlags): Promise<void> {
  const settleMs = await usage(() => wholeNumber(flags.settle, '--settle', 10, 60_000));
  const maxWaitMs = await usage(() => wholeNumber(flags.wait, '--wait', 100, 600_000));
  const { collectFleetStatus, formatStatusTable, statusJsonLine } = await import('../../fleet/operator/index.js');
  const { client, settings } = await connect(flags, 'status');
  try {
    const { view } = await collectFleetStatus(client, { prefix: settings.prefix, settleMs, maxWaitMs });
    const rows = view.rows();
    process.stdout.write(flags.json ? statusJsonLine(rows, view.bad) : formatStatusTable(rows, view.bad));
  } finally {
    await client.endAsync(true);
  }
}

function registerFleetCmd(fleet: Command): void {
  addConnectionOptions(
    fleet
      .command('cmd')
      .description(
        'send a command to one machine and print its reply (exit 0: ok reply, 1: error reply, 69: no reply in time ' +
          'or no broker)',
      )
      .argument('<machineId>', 'the machine (its topic level under the prefix)')
      .argument(
        '<name>',
        'ping, doctor, outbox.list, outbox.retry, reader.disable, reader.enable, config.get, config.set, ' +
          'service.restart',
      )
      .argument('[json]', 'the arguments as one JSON object, e.g. \'{"key":"gateway.timeoutMs"}\'')
      .option('--json', 'print the reply as JSON')
      .option('--timeout <ms>', 'how long to wait for the reply', '10000')
      .addOption(
        new Option(
          '--sign-key <file>',
          'sign with this operator private key (PEM, from `qrvend fleet keygen`; keep it off the machines)',
        ).env('QRVEND_FLEET_SIGN_KEY'),
      )
      .addOption(
        new Option('--key-id <id>', "the id of that key in the machines' trust file").env('QRVEND_FLEET_KEY_ID'),
      )
      .option('--ttl <s>', 'how long the signed command stays valid, in seconds (at most 900)', '60')
      .option('--signature-format <n>', SIGNATURE_FORMAT_HELP),
  ).action(fleetCmd);
}

async function fleetCmd(machineId: string, name: string, json: string | undefined, flags: CmdFlags): Promise<void> {
  const timeoutMs = await usage(() => wholeNumber(flags.timeout, '--timeout', 100, 600_000));
  const ttlS = await usage(() => wholeNumber(flags.ttl, '--ttl', 1, 900));
  const { sendFleetCommand, parseArgsText, checkCommand, formatReply, replyJsonLine } =
    await import('../../fleet/operator/index.js');
  const args = parseArgsText(json);
  checkCommand(machineId, name, args);
  const signer = await signerOf(flags, ttlS);
  const { client, protocol, settings } = await connect(flags, 'cmd');
  try {
    const { reply, elapsedMs } = await sendFleetCommand(client, {
      prefix: settings.prefix,
      machineId,
      name,
      args,
      timeoutMs,
      protocol,
      ...(signer ? { signer } : {}),
    });
    process.stdout.write(flags.json ? replyJsonLine(reply) : formatReply(reply, elapsedMs));
    if (!reply.ok) process.exitCode = 1;
  } finally {
    await client.endAsync(true);
  }
}
