import type { Command } from 'commander';
import type { SimGatewayCliOptions } from '../../sim/gateway/cli.js';

const collect = (value: string, previous: string[]) => [...previous, value];

export function register(parent: Command): void {
  parent
    .command('gateway')
    .description(
      'run the payment gateway simulator (Authorization, Settlement, Cancel, ' +
        'GenerateQR, Inquiry, Void) with a ledger, behaviours and fault injection',
    )
    .option('--listen <host:port>', 'address to listen on', '127.0.0.1:8090')
    .option('--cert <file>', 'PEM certificate: serve HTTPS (needs --key)')
    .option('--key <file>', 'PEM private key for --cert')
    .option(
      '--fault <kind:rate[:ops]>',
      'inject a fault, repeatable; kinds: http500, reset-before, reset-after, ' +
        'hang, not-json, bad-schema; e.g. reset-after:0.1:Settlement',
      collect,
      [],
    )
    .option('--seed <n>', 'seed of the fault random sequence', '1')
    .option('--hang-ms <ms>', 'how long a hang fault holds a request', '60000')
    .option('--log-level <level>', 'log level (debug logs every request)', 'info')
    .option(
      '--lenient',
      'accept (and drop) request members the interface does not define, instead of answering 998 naming them',
    )
    .addHelpText(
      'after',
      '\nEndpoints besides the operations: GET /_sim/ledger (read-only ' +
        'ledger), POST /_sim/control (faults, behaviours, seed, reset).',
    )
    .action(async (opts: SimGatewayCliOptions) => {
      const { runSimGateway } = await import('../../sim/gateway/cli.js');
      await runSimGateway(opts);
    });
}
