import { Option, type Command } from 'commander';
// Type only: the console's code is loaded inside the action.
import type { ConsoleFlags } from '../../console/run.js';

const DB_HELP = 'the database: a SQLite file (default ./console.sqlite) or postgres://USER@HOST:PORT/DB';

/** Where the account commands find the database: --db, else the configuration file's db, else the default. */
async function databaseOf(opts: { db?: string; config?: string }): Promise<string> {
  if (opts.db !== undefined) return opts.db;
  if (opts.config !== undefined) {
    const { readConfigFile } = await import('../../console/config.js');
    const db = readConfigFile(opts.config).db;
    if (typeof db === 'string') return db;
  }
  return './console.sqlite';
}

export function register(parent: Command): void {
  const console = parent
    .command('console')
    .description(
      "the operator's web console: the fleet's sales, machines, alarms, audits and rollouts, kept in a database " +
        '(docs/console.md)',
    )
    .option('-c, --config <file>', 'the console configuration (JSON, see docs/console.md); flags override it')
    .option('--broker <url>', 'the broker: mqtts://HOST:PORT (mqtt:// only on loopback)')
    .option('--prefix <prefix>', 'topic prefix of the fleet (fleet.topicPrefix on the machines)')
    .option('--db <target>', DB_HELP)
    .option('--listen <host:port>', 'where the pages are served (default 127.0.0.1:8480)')
    .addOption(
      new Option(
        '--subscription <kind>',
        'shared ($share/<group>/...) or plain (a broker without shared subscriptions)',
      ).choices(['shared', 'plain']),
    )
    .option('--group <name>', 'the shared-subscription group of all instances of this console')
    .option('--instance <name>', "this instance's persistent session on the broker (unique per instance)")
    .action(async (opts: ConsoleFlags) => {
      const { runConsoleProcess } = await import('../../console/run.js');
      process.exitCode = await runConsoleProcess(opts);
    });
  const user = console.command('user').description('operator accounts of the console');
  user
    .command('add')
    .description(
      'add an account, or set its role and password (the password from standard input or a prompt, never an argument)',
    )
    .argument('<name>', 'the account name (letters, digits, ._@-)')
    .addOption(
      new Option('--role <role>', 'viewer (reads) or admin (also manages accounts)')
        .choices(['viewer', 'admin'])
        .makeOptionMandatory(),
    )
    .option(
      '--time-zone <zone>',
      "the zone the account reads times in (IANA, e.g. Europe/Berlin; default: the console's)",
    )
    // --db and -c are the console's own options (given before or after `user add`).
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ role: string; timeZone?: string; db?: string; config?: string }>();
      const { addUser } = await import('../../console/user-cli.js');
      await addUser(await databaseOf(opts), name, opts.role, opts.timeZone ?? null);
    });
  user
    .command('list')
    .description('list the accounts')
    .action(async (_opts: unknown, cmd: Command) => {
      const { printUsers } = await import('../../console/user-cli.js');
      await printUsers(await databaseOf(cmd.optsWithGlobals<{ db?: string; config?: string }>()));
    });
}
