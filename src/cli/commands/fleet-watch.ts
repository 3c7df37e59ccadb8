import type { Command } from 'commander';
import { addConnectionOptions, connect, usage, wholeNumber, type ConnectionFlags } from './fleet-connection.js';

interface WatchFlags extends ConnectionFlags {
  json?: boolean;
  count?: string;
  seconds?: string;
  share?: string;
  session?: string;
  presence: boolean;
}

export function registerFleetWatch(fleet: Command): void {
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
  ).action(fleetWatch);
}

/** The bounds of the watch (--count, --seconds) and the names it hands the broker (--share, --session). */
async function checkWatchFlags(flags: WatchFlags): Promise<{ count?: number; seconds?: number }> {
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
  return { count, seconds };
}

async function fleetWatch(flags: WatchFlags): Promise<void> {
  const { count, seconds } = await checkWatchFlags(flags);
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
}
