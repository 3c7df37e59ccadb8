import type { Command } from 'commander';
import type { SimDexOptions } from '../../sim/dex/cli.js';

export function register(parent: Command): void {
  parent
    .command('dex')
    .description(
      "play a vending machine's DEX jack (DEX/UCS or DDCMP) on a pseudo-terminal, serving audit files in turn",
    )
    .argument(
      '<files...>',
      'audit files served one per read, the last one repeated (a VMC ' +
        'that resets its interim counters gives a new file each time)',
    )
    .requiredOption('--pty <path>', "the VMC end of a pty pair (the agent's dex.port is the other end)")
    .option('--agent-pty <path>', 'make the pty pair here and now: the agent end appears at this path')
    .option('--protocol <p>', 'dex-ucs or ddcmp', 'dex-ucs')
    .option(
      '--behaviour <b>',
      'normal, initiates (leads the first handshake), slow, silent, crc-errors, crc-once, stall-mid-block, ' +
        'no-data (answers 04)',
      'normal',
    )
    .action(async (files: string[], opts: SimDexOptions) => {
      const { runSimDex } = await import('../../sim/dex/cli.js');
      await runSimDex(files, opts);
    });
}
