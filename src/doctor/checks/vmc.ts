/**
 * The VMC as the running daemon saw it (src/mdb/vmc-watch.ts): which profile runs, what the VMC did
 * that contradicts it, a refused board configuration and a reset loop. Read from the facts file the
 * daemon keeps beside the ledger.
 */
import { readVmcFacts, vmcFactsPath } from '../../mdb/facts-file.js';
import type { Check } from '../types.js';
import { PROFILES } from '../../config/mdb-profiles.js';

export const vmcCheck: Check = {
  id: 'vmc',
  title: 'VMC profile and behaviour (daemon)',
  needsConfig: true,
  async run(_ctx, config) {
    const path = vmcFactsPath(config.store.path);
    const running =
      `profile ${config.mdb.profile} (level ${PROFILES[config.mdb.profile].level}) ` +
      `as cashless ${config.mdb.device === 'cashless2' ? '#2' : '#1'}`;
    const f = readVmcFacts(path);
    if (f === null) {
      return {
        status: 'OK',
        summary: `${running}; no facts from a running daemon yet (${path})`,
        details: { profile: config.mdb.profile, path },
      };
    }
    const details = { ...f, path } as Record<string, unknown>;
    const overrides = f.profileOverrides.length > 0 ? `, overridden: ${f.profileOverrides.join(', ')}` : '';
    const head = `profile ${f.profile} (level ${f.level}${overrides}) as ${f.device} at ${f.address}`;
    if (f.configRefused !== null) {
      return {
        status: 'FAIL',
        summary:
          `${head}: the board refused C,SETCONF,${f.configRefused.key}=${f.configRefused.value}` +
          ` (answer: ${f.configRefused.answer}); the reader is disabled`,
        action:
          `check the board's firmware documentation for this key's name and set ` +
          `it in mdb.boardKeys (docs/mdb.md), or update the board's firmware`,
        details,
      };
    }
    if (f.resetLoop !== null) {
      return {
        status: 'FAIL',
        summary: `${head}: the VMC resets the reader in a loop; held off the bus until ${f.resetLoop.heldUntil}`,
        action:
          'try another mdb.profile (a session profile, or level1-session), or a ' +
          'lower MDB level for this cashless device in the VMC menu (docs/mdb.md)',
        details,
      };
    }
    if (f.contradictions.length > 0) {
      return {
        status: 'WARN',
        summary: `${head}: ${f.contradictions.join('; ')}`,
        action: 'see docs/mdb.md, "VMC profiles", for what each profile expects',
        details,
      };
    }
    return {
      status: 'OK',
      summary: `${head}; the VMC behaves as the profile expects (${f.polls} polls since configuration)`,
      details,
    };
  },
};
