import { Option, type Command } from 'commander';
import { registerUpdate } from './fleet-update.js';
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

interface WatchFlags extends ConnectionFlags {
  json?: boolean;
  count?: string;
  seconds?: string;
  share?: string;
  session?: string;
  presence: boolean;
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

interface KeygenFlags {
  out: string;
  id?: string;
  scopes: string;
  comment?: string;
  machine?: string;
}

export function register(parent: Command): void {
  const fleet = parent
    .command('fleet')
    .description(
      "the operator's view of the fleet over its MQTT broker: status, live events, remote commands, staged updates",
    );

  addConnectionOptions(
    fleet
      .command('status')
      .description('one line per machine from its retained status: online, reader, gateway, last sale, outbox, alarms')
      .option('--json', 'print one JSON object')
      .option('--settle <ms>', 'done when no new status came for this long', '300')
      .option('--wait <ms>', 'at most this long in all', '10000'),
  ).action(async (flags: StatusFlags) => {
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
  });

  addConnectionOptions(
    fleet
      .command('watch')
      .description('live sale and alarm events, and machines coming online or going away, one line each')
      .option('--json', 'print NDJSON: one object per line')
      .option('--count <n>', 'stop after this many events')
      .option('--seconds <s>', 'stop after this many seconds')
      .option(
        '--share <group>',
        'consume events through a shared subscription ($share/GROUP/...), spread over several watchers',
      )
      .option(
        '--session <name>',
        'a persistent session: the broker queues events while this watcher is away and hands them over when it is back',
      )
      .option('--no-presence', 'events only, no online/offline lines'),
  ).action(async (flags: WatchFlags) => {
    const count =
      flags.count === undefined ? undefined : await usage(() => wholeNumber(flags.count!, '--count', 1, 100_000_000));
    const seconds =
      flags.seconds === undefined
        ? undefined
        : await usage(() => wholeNumber(flags.seconds!, '--seconds', 1, 31_536_000));
    if (flags.share !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(flags.share)) {
      await usage(() => {
        throw new Error('--share must be 1-64 letters, digits or ._-');
      });
    }
    if (flags.session !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(flags.session)) {
      await usage(() => {
        throw new Error('--session must be 1-64 letters, digits or ._-');
      });
    }
    const { watchFleet, createWatchListener, formatEventLine, formatPresenceLine, watchJsonLine, brokerLabel } =
      await import('../../fleet/operator/index.js');
    const { escapeForTerminal } = await import('../../core/terminal-text.js');
    let seen = 0;
    let badShown = 0;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const prefix = flags.prefix;
    const listener = createWatchListener(prefix, {
      onEvent(machineId, event) {
        process.stdout.write(
          flags.json ? watchJsonLine({ type: 'event', machineId, event }) : `${formatEventLine(machineId, event)}\n`,
        );
        seen += 1;
        if (count !== undefined && seen >= count) finish();
      },
      onPresence: flags.presence
        ? (machineId, status) =>
            process.stdout.write(
              flags.json
                ? watchJsonLine({ type: 'presence', machineId, status })
                : `${formatPresenceLine(machineId, status)}\n`,
            )
        : undefined,
      onBad(message) {
        if (badShown++ < 10)
          process.stderr.write(
            `qrvend fleet watch: skipped a malformed message on ${escapeForTerminal(message.topic.slice(0, 200))}: ` +
              `${message.reason}: ${escapeForTerminal(message.detail)}\n`,
          );
      },
    });
    const { client, settings, protocol } = await connect(flags, 'watch', 2_000, {
      session: flags.session,
      beforeConnect: (c) => c.on('message', listener.onMessage),
    });
    client.on('offline', () => process.stderr.write('qrvend fleet watch: broker connection lost; reconnecting\n'));
    client.on('connect', () => process.stderr.write('qrvend fleet watch: connected again\n'));
    const watch = await watchFleet(client, settings.prefix, listener, { share: flags.share });
    process.stderr.write(
      `qrvend fleet watch: watching ${settings.prefix}/+/events on ${brokerLabel(settings.url)} (MQTT ` +
        `${protocol === 5 ? '5' : '3.1.1'})\n`,
    );
    const timer = seconds === undefined ? undefined : setTimeout(finish, seconds * 1000);
    process.once('SIGINT', finish);
    process.once('SIGTERM', finish);
    try {
      await done;
    } finally {
      if (timer) clearTimeout(timer);
      process.off('SIGINT', finish);
      process.off('SIGTERM', finish);
      await watch.stop({ keepSubscription: flags.session !== undefined });
      await client.endAsync(true);
      const { bad, duplicates } = watch.view;
      if (bad.total > 0 || duplicates > 0)
        process.stderr.write(
          `qrvend fleet watch: ${bad.total} malformed messages skipped, ${duplicates} repeated events shown once\n`,
        );
    }
  });

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
  ).action(async (machineId: string, name: string, json: string | undefined, flags: CmdFlags) => {
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
  });

  registerUpdate(fleet);

  fleet
    .command('keygen')
    .description(
      'make an operator signing key (Ed25519): writes the private key (mode 0600) and prints the entry for the ' +
        "machines' trust file (public key only)",
    )
    .requiredOption(
      '--out <file>',
      "where the private key goes (refused if it exists); keep it on the operator's workstation or signing host, " +
        'never on a machine',
    )
    .option('--id <id>', "the key's id in the trust file (default: key-YYYYMMDD)")
    .option(
      '--scopes <list>',
      'what it may sign, comma-separated: read, operate, configure, update (`qrvend fleet update`, `npm run release ' +
        '-- --sign`); start, registry are for the relay',
      'read',
    )
    .option('--comment <text>', 'free text in the trust-file entry (who holds it)')
    .option(
      '--machine <machineId>',
      "make this machine's own key instead (on the machine, as the agent's user; fleet.machineKeyFile): prints its " +
        "entry for the relay's registry (docs/relay.md)",
    )
    .action(async (flags: KeygenFlags) => {
      const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
      if (flags.machine !== undefined) {
        const { writeMachineKey } = await import('./fleet-machine-key.js');
        return writeMachineKey(flags.machine, flags.out);
      }
      const { generateSigningKey, KEY_ID, SCOPES } = await import('../../trust/keys.js');
      const { writeFileSync } = await import('node:fs');
      const id = flags.id ?? `key-${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
      if (!KEY_ID.test(id))
        throw new QrvendError(ErrorCodes.CLI_USAGE, '--id: letters, digits and . _ : - only, 1 to 64');
      const scopes = [
        ...new Set(
          flags.scopes
            .split(',')
            .map((x) => x.trim())
            .filter((x) => x.length > 0),
        ),
      ];
      const unknown = scopes.filter((x) => !(SCOPES as readonly string[]).includes(x));
      if (scopes.length === 0 || unknown.length > 0)
        throw new QrvendError(
          ErrorCodes.CLI_USAGE,
          `--scopes: one or more of ${SCOPES.join(', ')}` +
            (unknown.length > 0 ? `; not a scope: ${unknown.join(', ').slice(0, 100)}` : ''),
        );
      if (flags.comment !== undefined && flags.comment.length > 200)
        throw new QrvendError(ErrorCodes.CLI_USAGE, '--comment: at most 200 characters');
      const key = generateSigningKey();
      try {
        writeFileSync(flags.out, key.privatePem, { mode: 0o600, flag: 'wx' });
      } catch (err) {
        throw new QrvendError(
          ErrorCodes.CLI_USAGE,
          `cannot write ${flags.out} (${(err as NodeJS.ErrnoException).code ?? 'error'}); an existing key is never ` +
            `overwritten`,
        );
      }
      const entry = {
        id,
        publicKey: key.publicKey,
        scopes,
        ...(flags.comment !== undefined ? { comment: flags.comment } : {}),
      };
      process.stdout.write(`${JSON.stringify(entry)}\n`);
      process.stderr.write(
        `qrvend fleet keygen: private key written to ${flags.out} (mode 0600). Add the line above to "keys" in each ` +
          `machine's trust file (fleet.trustFile), then sign with: qrvend fleet cmd --sign-key ${flags.out} --key-id ` +
          `${id} ...\n`,
      );
    });
}
