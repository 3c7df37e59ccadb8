import type { Command } from 'commander';
import type { SimWalletCliOptions } from '../../sim/wallet/cli.js';

export function register(parent: Command): void {
  parent
    .command('wallet')
    .description(
      'send a Static QR Start to qrvend the way a consumer wallet backend ' +
        'does; exit 0 on Approved, 1 on Declined, 69 when there was no answer',
    )
    .requiredOption('--url <url>', "base URL of qrvend's Start endpoint, e.g. http://127.0.0.1:8091")
    .requiredOption('--integrator <name>', 'integrator name (start.integratorName)')
    .requiredOption('--token-file <file>', 'file holding the SecretToken (never printed)')
    .option('--terminal-id <id>', 'TerminalId of the machine')
    .option('--uni-qr <qr>', 'UniQR of the machine')
    .option('--transaction-id <id>', 'TransactionId, 8..40 characters (default: random)')
    .option('--balance <amount>', "the consumer's balance, e.g. 3.50")
    .option('--app-user-id <id>', 'AppUserId (default: wallet-sim-user)')
    .option('--ca-file <file>', 'extra CA (PEM) for an HTTPS Start endpoint')
    .option('--json', 'print the result as one JSON line')
    .action(async (opts: SimWalletCliOptions) => {
      const { runSimWallet } = await import('../../sim/wallet/cli.js');
      await runSimWallet(opts);
    });
}
