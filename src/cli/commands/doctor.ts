import type { Command } from 'commander';

export function register(parent: Command): void {
  parent
    .command('doctor')
    .description(
      'check this machine: config, secret token, serial device, ' +
        'board, reader, gateway, clock, disk, ledger, outbox, display',
    )
    .option('-c, --config <file>', 'site configuration (default: $QRVEND_CONFIG, else built-in defaults)')
    .option('--json', 'print the report as JSON (one object: ok, counts, results[])')
    .addHelpText(
      'after',
      '\nEach check says OK, WARN or FAIL, and what to do when not OK.\n' +
        'Exit code: 0 when nothing failed (warnings allowed), 1 when any check failed.\n' +
        'Run it as root (sudo) to check what the service user can reach; it never prints the secret token.',
    )
    .action(async (opts: { config?: string; json?: boolean }) => {
      const { runDoctor, doctorExitCode, formatReport } = await import('../../doctor/index.js');
      const configFile = opts.config ?? (process.env.QRVEND_CONFIG || undefined);
      const report = await runDoctor({ configFile });
      process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report, configFile));
      process.exitCode = doctorExitCode(report);
    });
}
