import type { Command } from 'commander';
import type { SimVmcOptions } from '../../sim/vmc/cli.js';

export function register(parent: Command): void {
  parent
    .command('vmc')
    .description(
      'play the vending machine (VMC) behind an MDB adapter board, on a pseudo-terminal, driven by a line script',
    )
    .requiredOption('--pty <path>', "the VMC end of a pty pair (the agent's mdb.port is the other end)")
    .option(
      '--agent-pty <path>',
      'make the pty pair here and now: the agent end appears at this path, the VMC end at --pty (both removed on exit)',
    )
    .option('--script <file>', 'read the script from this file instead of stdin')
    .option('--baud-rate <n>', 'baud rate to open the pty with', '115200')
    .option('--poll-ms <ms>', 'interval of r,ACK lines (the VMC polling the reader)', '100')
    .option('--auto <policy>', 'after an approval: manual (wait for success/fail), success or fail', 'manual')
    .option('--firmware <text>', 'firmware version the board reports to V', 'qrvend-sim-1.0')
    .option('--board-id <text>', 'board id the board reports to V', 'SIMVMC0001')
    .option('--quiet', 'do not print the lines exchanged with the agent')
    .addHelpText(
      'after',
      `
Let the simulator make the pty pair (nothing else to install):
  qrvend sim vmc --agent-pty /tmp/qrvend-agent --pty /tmp/qrvend-vmc
then run the agent with mdb.port = /tmp/qrvend-agent. The pair lives as long as the simulator.
Without --agent-pty, --pty must be the VMC end of a pair made by someone else.

Script commands, one per line (# starts a comment):
  enable | disable            the VMC enables / disables the reader
  select <item> <price>       the consumer selects, e.g. select 12 1.50
  success | fail [code]       the approved vend is dispensed / fails (c,ERR,VEND 3)
  cancel                      the consumer cancels
  end                         session complete
  reset                       the VMC resets the reader (any time, also mid-vend)
  board-reset                 the adapter board restarts
  silent <ms>                 the board sends nothing for a while
  noise <count>               lines of random noise, overlong and partial lines
  wait <ms>                   pause the script
  auto success|fail|manual    what happens after each approval
  status | records            print the state / what was vended (JSON)`,
    )
    .action(async (opts: SimVmcOptions) => {
      const { runSimVmc } = await import('../../sim/vmc/cli.js');
      await runSimVmc(opts);
    });
}
