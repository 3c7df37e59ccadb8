/**
 * `npm run fleet-sim -- --handlers dist/rigs/fleet/update-handlers.js`: simulated machines that
 * answer `update.offer` (update-answers.ts). The trust file comes from QRVEND_SIM_TRUST_FILE; the
 * behaviours from QRVEND_SIM_UPDATE_BEHAVIOURS, e.g. `vm-0002=fail,vm-0003=roll-back,vm-0004=silent`
 * (every other machine: healthy). For trying `qrvend fleet update` against a simulated fleet.
 */
import { loadKeyring } from '../../src/trust/keys.js';
import { updateOfferHandler, type UpdateBehaviour } from './update-answers.js';
import type { CommandHandler } from './machine.js';

const KINDS = new Set(['healthy', 'refuse', 'fail', 'roll-back', 'silent']);

function behaviours(text: string | undefined): Map<string, UpdateBehaviour> {
  const map = new Map<string, UpdateBehaviour>();
  for (const item of (text ?? '').split(',').filter((x) => x.length > 0)) {
    const [id, kind] = item.split('=');
    if (id === undefined || kind === undefined || !KINDS.has(kind))
      throw new Error(`QRVEND_SIM_UPDATE_BEHAVIOURS: "${item.slice(0, 64)}" is not machine=${[...KINDS].join('|')}`);
    map.set(id, { kind } as UpdateBehaviour);
  }
  return map;
}

const trustFile = process.env.QRVEND_SIM_TRUST_FILE;
if (trustFile === undefined)
  throw new Error("set QRVEND_SIM_TRUST_FILE to the machines' trust file (with a key of scope update)");
const keyring = loadKeyring(trustFile);
const byMachine = behaviours(process.env.QRVEND_SIM_UPDATE_BEHAVIOURS);

export const handlers: Record<string, CommandHandler> = {
  'update.offer': updateOfferHandler({ keyring, behaviour: (id) => byMachine.get(id) ?? { kind: 'healthy' } }),
};
