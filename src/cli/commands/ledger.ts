import type { Command } from 'commander';

export function register(parent: Command): void {
  const ledger = parent.command('ledger').description('the ledger file: acknowledge that it was lost');
  ledger
    .command('acknowledge-loss')
    .description(
      'after the ledger was lost (deleted or truncated; LEDGER_CORRUPT, sessions ' +
        'refused): start a new one; reconcile the lost sales with the provider first',
    )
    .option('--config <file>', 'site configuration file (default: QRVEND_CONFIG, else the defaults); gives store.path')
    .action(async (opts: { config?: string }) => {
      const { loadConfig, warnRejectedOverlay } = await import('../../config/load.js');
      const { acknowledgeLoss, ledgerLossOf, markerPathOf } = await import('../../ledger/identity.js');
      const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
      const { escapeForTerminal } = await import('../../core/terminal-text.js');
      const loaded = loadConfig({ file: opts.config });
      const { config } = loaded;
      warnRejectedOverlay(loaded.overlay);
      const path = config.store.path;
      const loss = ledgerLossOf(path);
      if (loss === null) {
        throw new QrvendError(
          ErrorCodes.CLI_USAGE,
          `ledger ${escapeForTerminal(path)} is not in the lost state: nothing to acknowledge`,
          {
            hint:
              `this command only moves the identity marker ${escapeForTerminal(markerPathOf(path))} ` +
              `aside when the ledger beside it is lost (missing, empty, or another file); a torn ` +
              `marker beside a sound ledger is rewritten by qrvend at its next start (qrvend doctor)`,
          },
        );
      }
      const movedTo = acknowledgeLoss(path, Date.now());
      process.stdout.write(
        `ledger loss acknowledged (${loss}); marker kept as ${escapeForTerminal(movedTo ?? '')}` +
          `; the running daemon starts a new ledger within 5 s\n`,
      );
    });
}
