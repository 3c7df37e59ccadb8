/**
 * Which operator scope signs which command (docs/decisions/fleet-link.md, "Trust"; src/trust/keys.ts), and
 * the statement a command's signature covers. Part of the contract: the operator CLI signs what
 * the device verifies, so both build the statement here.
 */
import type { Scope } from '../../trust/keys.js';
import type { CommandName } from './topics.js';

export const COMMAND_SCOPES: Readonly<Record<CommandName, Scope>> = {
  ping: 'read',
  doctor: 'read',
  'outbox.list': 'read',
  'config.get': 'read',
  'reader.disable': 'operate',
  'reader.enable': 'operate',
  'outbox.retry': 'operate',
  'service.restart': 'operate',
  'config.set': 'configure',
  /**
   * A relayed Start is vouched for by the relay's own key (scope `start`), checked by the relayed
   * Start code (src/start/relayed.ts), not by an operator's command signature.
   */
  start: 'start',
  /** The relay's confirmation that the wallet got the Approved answer in time: its voucher key too. */
  'start.confirm': 'start',
  /** The manifest carries its own signature by an `update` key too (src/fleet/contract/manifest-schema.ts). */
  'update.offer': 'update',
  'dex.read': 'operate',
};

/** Kind of the signed statement (src/trust/canonical.ts) of a fleet command. */
export const COMMAND_STATEMENT_KIND = 'command';

/**
 * What an operator signs: this machine, this command, these arguments (plus the window and nonce signStatement adds).
 */
export function commandStatement(machineId: string, command: string, args: unknown): Record<string, unknown> {
  return { machineId, command, args: args ?? {} };
}

/** The scope of a key that may sign a machine's catalog document (contract/catalog.ts). */
export const CATALOG_SCOPE: Scope = 'catalog';
