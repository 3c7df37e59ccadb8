import type { Command } from 'commander';

interface SerialTapCliOptions {
  device: string;
  baudRate: string;
  link: string;
  out: string;
}

export function register(parent: Command): void {
  parent
    .command('serial-tap')
    .description(
      "record the serial line: a pty for the agent joined to the board's device (used by qrvend-serial-trace)",
    )
    .requiredOption('--device <path>', "the board's serial device, /dev/... only")
    .requiredOption('--link <path>', "where the agent's pty appears (point mdb.port at it)")
    .requiredOption('--out <file>', 'the trace file (appended to, created 0600)')
    .option('--baud-rate <n>', 'baud rate of the device', '115200')
    .action(async (opts: SerialTapCliOptions) => {
      const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
      const { runSerialTap } = await import('../../trace/serial-tap.js');
      if (!/^\d{2,7}$/.test(opts.baudRate))
        throw new QrvendError(
          ErrorCodes.CLI_USAGE,
          `--baud-rate must be a whole number, got ${JSON.stringify(opts.baudRate)}`,
        );
      const stop = new AbortController();
      for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => stop.abort());
      const why = await runSerialTap(
        {
          device: opts.device,
          baudRate: Number(opts.baudRate),
          link: opts.link,
          out: opts.out,
          onReady: () => process.stdout.write(`ready ${opts.link}\n`),
        },
        stop.signal,
      );
      process.stderr.write(`qrvend serial-tap: ${why}\n`);
    });
}
