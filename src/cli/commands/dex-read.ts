import type { Command } from 'commander';
import type { DexReadOptions } from '../../dex/link/cli.js';

export function register(parent: Command): void {
  parent
    .command('read')
    .description(
      "read the vending machine's audit (EVA-DTS) over its DEX jack now: writes the raw file, prints what was read",
    )
    .option(
      '--config <file>',
      'site configuration file (default: QRVEND_CONFIG, else the defaults); ' +
        'gives dex.port, dex.protocol, dex.maxFileBytes and store.path',
    )
    .option('--port <device>', 'the serial device wired to the DEX jack (default: dex.port)')
    .option('--protocol <p>', 'auto, dex-ucs or ddcmp (default: dex.protocol)')
    .option('--out <file>', 'where to write the raw audit file (default: dex-<UTC time>.txt here)')
    .addHelpText(
      'after',
      '\nWhile the daemon runs a scheduled read the port is locked: the read ' +
        'fails with DEX_PORT; try again a minute later. See docs/dex.md.',
    )
    .action(async (opts: DexReadOptions) => {
      const { runDexRead } = await import('../../dex/link/cli.js');
      await runDexRead(opts);
    });
}
