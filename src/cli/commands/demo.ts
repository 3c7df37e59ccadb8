import type { Command } from 'commander';
import { LOG_LEVELS, type LogLevel } from '../../core/log.js';
import { ErrorCodes, QrvendError } from '../../core/errors.js';

export function register(parent: Command): void {
  parent
    .command('demo')
    .description(
      'the agent with the gateway and VMC simulators: a consumer buys through ' +
        'Static QR and Dynamic QR; exit 0 when every sale was settled exactly once',
    )
    .option('--log-level <level>', `agent log level shown during the demo (${LOG_LEVELS.join(', ')})`, 'error')
    .option('--no-qr', 'do not draw the screens (the dynamic QR) in the terminal')
    .option('--step-timeout <ms>', 'deadline of each demo step', '20000')
    .option('--console', 'instead: the operator console on a SQLite file with a simulated fleet selling, until Ctrl-C')
    .option('--listen <host:port>', 'with --console: where the console serves its pages', '127.0.0.1:8480')
    .action(async (opts: { logLevel: string; qr: boolean; stepTimeout: string; console?: boolean; listen: string }) => {
      if (opts.console === true) {
        const { runConsoleDemo } = await import('../../demo/console-demo.js');
        process.exitCode = await runConsoleDemo(opts.listen, (line) => process.stdout.write(`${line}\n`));
        return;
      }
      if (!(LOG_LEVELS as readonly string[]).includes(opts.logLevel)) {
        throw new QrvendError(
          ErrorCodes.CLI_USAGE,
          `--log-level must be one of ${LOG_LEVELS.join(', ')} (got "${opts.logLevel}")`,
        );
      }
      const stepTimeoutMs = Number(opts.stepTimeout);
      if (!Number.isInteger(stepTimeoutMs) || stepTimeoutMs < 1000) {
        throw new QrvendError(
          ErrorCodes.CLI_USAGE,
          `--step-timeout must be a whole number of milliseconds >= 1000 (got "${opts.stepTimeout}")`,
        );
      }
      const { runDemo } = await import('../../demo/demo.js');
      process.exitCode = await runDemo({ logLevel: opts.logLevel as LogLevel, showQr: opts.qr, stepTimeoutMs });
    });
}
