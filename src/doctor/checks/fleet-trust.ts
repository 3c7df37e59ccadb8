/**
 * The operators' keys the fleet link trusts (fleet.trustFile, docs/fleet.md "Signed commands"):
 * with the link on, a machine without a usable trust file refuses every signed command, and a
 * trust file that someone other than root owns lets that someone add a key of their own.
 */
import { existsSync } from 'node:fs';
import { loadKeyring, ownedByRoot, TrustFileError } from '../../trust/keys.js';
import type { Check } from '../types.js';

export const fleetTrustCheck: Check = {
  id: 'fleet-trust',
  title: 'fleet operator keys',
  needsConfig: true,
  async run(_ctx, config) {
    const { url, trustFile, allowUnsignedReads } = config.fleet;
    if (url === null)
      return {
        status: 'OK',
        summary: 'fleet link off (fleet.url is null): no command comes from afar',
        details: { fleet: false },
      };
    const action =
      'make a key with `qrvend fleet keygen` on an operator workstation and list its ' +
      'public half in the trust file (docs/fleet-operations.md, "Operator keys")';
    if (trustFile === null || !existsSync(trustFile)) {
      return {
        status: 'WARN',
        summary:
          `no operator key (${trustFile === null ? 'fleet.trustFile is null' : `no file at ${trustFile}`}` +
          `): every command that needs a signature is refused`,
        action,
        details: { trustFile, keys: 0, allowUnsignedReads },
      };
    }
    let keyring;
    try {
      keyring = loadKeyring(trustFile);
    } catch (err) {
      return {
        status: 'FAIL',
        summary: err instanceof TrustFileError ? err.message : `${trustFile} cannot be read`,
        action:
          `fix ${trustFile} (root-owned, mode 0644, ` +
          `{"keys":[{"id","publicKey","scopes"}]}), then restart the agent`,
        details: { trustFile },
      };
    }
    const keys = [...keyring.byId.values()].map((k) => `${k.id} (${[...k.scopes].join(', ')})`);
    const details = { trustFile, keys: keys.length, ids: [...keyring.byId.keys()], allowUnsignedReads };
    if (keys.length === 0)
      return {
        status: 'WARN',
        summary: `${trustFile} holds no key: every command that needs a signature is refused`,
        action,
        details,
      };
    if (!ownedByRoot(trustFile)) {
      return {
        status: 'WARN',
        summary: `${trustFile} is not owned by root: its owner can add a key of their own`,
        action: `chown root:root ${trustFile} && chmod 0644 ${trustFile}`,
        details,
      };
    }
    return {
      status: 'OK',
      summary: `${keys.length} key(s): ${keys.join('; ')}${allowUnsignedReads ? '; reads taken unsigned' : ''}`,
      details,
    };
  },
};
