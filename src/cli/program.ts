/**
 * The `qrvend` command tree. Each subcommand lives in `commands/<name>.ts`, which declares its
 * options and imports the code behind it only inside its action: `qrvend run` does not pay at
 * start-up for the simulators, the demo or the doctor.
 */
import { Command, CommanderError } from 'commander';
import { ExitCodes, isQrvendError, ErrorCodes } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import * as run from './commands/run.js';
import * as demo from './commands/demo.js';
import * as doctor from './commands/doctor.js';
import * as outbox from './commands/outbox.js';
import * as ledger from './commands/ledger.js';
import * as qr from './commands/qr.js';
import * as simGateway from './commands/sim-gateway.js';
import * as simVmc from './commands/sim-vmc.js';
import * as simWallet from './commands/sim-wallet.js';
import * as configCheck from './commands/config-check.js';
import * as configResetRemote from './commands/config-reset-remote.js';
import * as serialTap from './commands/serial-tap.js';
import * as fleet from './commands/fleet.js';
import * as relay from './commands/relay.js';
import * as consoleCmd from './commands/console.js';
import * as update from './commands/update.js';
import * as dexRead from './commands/dex-read.js';
import * as dexParse from './commands/dex-parse.js';
import * as simDex from './commands/sim-dex.js';

export function buildProgram(): Command {
  const program = new Command('qrvend')
    .description('QR-payment agent for vending machines: MDB cashless reader + Static/Dynamic QR payments')
    .version(VERSION, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  run.register(program);
  demo.register(program);
  doctor.register(program);
  outbox.register(program);
  ledger.register(program);
  qr.register(program);
  serialTap.register(program);
  fleet.register(program);
  relay.register(program);
  consoleCmd.register(program);
  update.register(program);

  const sim = program.command('sim').description('simulators for tests, demos and technicians').exitOverride();
  simGateway.register(sim);
  simVmc.register(sim);
  simWallet.register(sim);
  simDex.register(sim);

  const dex = program
    .command('dex')
    .description("the vending machine's own audit over its DEX jack (docs/dex.md)")
    .exitOverride();
  dexRead.register(dex);
  dexParse.register(dex);

  const config = program.command('config').description('configuration tools').exitOverride();
  configCheck.register(config);
  configResetRemote.register(config);

  // Every subcommand reports usage errors through the same path as the top level.
  const propagate = (cmd: Command) => {
    for (const sub of cmd.commands) {
      sub.exitOverride();
      sub.showHelpAfterError('(run with --help for usage)');
      propagate(sub);
    }
  };
  propagate(program);
  return program;
}

/** Exit code for an error that reached the top: 78 for configuration problems (sysexits EX_CONFIG). */
export function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCodes.OK : ExitCodes.USAGE;
  if (isQrvendError(err)) {
    switch (err.code) {
      case ErrorCodes.CONFIG_INVALID:
      case ErrorCodes.CONFIG_UNREADABLE:
      case ErrorCodes.SECRET_UNREADABLE:
      case ErrorCodes.CONSOLE_LISTEN_REFUSED:
      case ErrorCodes.CONSOLE_EMAIL_UNUSABLE:
      // Restarting cannot make an older document newer: the operator signs a new one or steps back.
      case ErrorCodes.VERSION_ROLLBACK:
      case ErrorCodes.VERSION_FLOOR_FAILED:
        return ExitCodes.CONFIG;
      case ErrorCodes.CLI_USAGE:
        return ExitCodes.USAGE;
      case ErrorCodes.FLEET_BROKER_UNREACHABLE:
      case ErrorCodes.FLEET_BROKER_REFUSED:
      case ErrorCodes.FLEET_NO_REPLY:
      case ErrorCodes.CONSOLE_STORE_FAILED:
        return ExitCodes.UNAVAILABLE;
      case ErrorCodes.FLEET_ROLLOUT_FILE:
        return ExitCodes.IO;
      default:
        return ExitCodes.FAILURE;
    }
  }
  return ExitCodes.SOFTWARE;
}
