/** The SQLite ledger passes its integrity check (read-only look, safe beside the running daemon). */
import { ACKNOWLEDGE_COMMAND, ledgerLossOf, markerPathOf, tornMarkerOf } from '../../ledger/identity.js';
import type { Check } from '../types.js';

export const ledgerCheck: Check = {
  id: 'ledger',
  title: 'ledger integrity',
  needsConfig: true,
  async run(ctx, config) {
    const look = ctx.ledger();
    const path = config.store.path;
    const loss = ledgerLossOf(path);
    if (loss !== null) {
      return {
        status: 'FAIL',
        summary: `ledger lost: ${loss}; the daemon refuses sessions`,
        action:
          `restore the ledger from a backup, or reconcile its sales ` +
          `with the provider and run \`${ACKNOWLEDGE_COMMAND}\``,
        details: { path, lost: true },
      };
    }
    switch (look.kind) {
      case 'missing':
        return {
          status: 'WARN',
          summary: `no ledger yet at ${path}`,
          action: 'normal before the first start (the daemon creates it); otherwise check store.path',
          details: { path, present: false },
        };
      case 'error':
        return {
          status: 'FAIL',
          summary: `${path} cannot be inspected: ${look.message}`,
          action:
            'copy the file aside for support; the daemon moves a damaged ' +
            'ledger aside and starts a new one at its next start',
          details: { path },
        };
      case 'inspected': {
        const { integrity, schemaVersion } = look.inspection;
        const details = { path, integrity, schemaVersion };
        if (integrity !== 'ok') {
          return {
            status: 'FAIL',
            summary: `${path} is damaged: ${integrity.slice(0, 200)}`,
            action:
              'copy the file aside for support (it may hold undelivered settlements); ' +
              'the daemon moves it aside and starts a new one at its next start',
            details,
          };
        }
        const torn = tornMarkerOf(path);
        if (torn !== null) {
          // Not lost: the ledger is the authority; the daemon rewrites its witness at the next start.
          return {
            status: 'WARN',
            summary:
              `${path} integrity ok (schema ${schemaVersion}), but its identity marker ` +
              `${markerPathOf(path)} is torn (${torn}; a power cut while it was written)`,
            action:
              'nothing to do: qrvend rewrites the marker from the ledger at its next ' +
              'start (`systemctl restart qrvend`); do not run acknowledge-loss',
            details: { ...details, tornMarker: torn },
          };
        }
        return { status: 'OK', summary: `${path} integrity ok (schema ${schemaVersion})`, details };
      }
    }
  },
};
