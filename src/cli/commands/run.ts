import type { Command } from 'commander';

export function register(parent: Command): void {
  parent
    .command('run')
    .description('run the payment agent (what the systemd service starts)')
    .option('-c, --config <file>', 'site configuration file layered over config/default.json (or QRVEND_CONFIG)')
    .action(async (opts: { config?: string }) => {
      const { runDaemonProcess } = await import('../../daemon/run.js');
      process.exitCode = await runDaemonProcess({ configFile: opts.config });
    });
}
