import type { Command } from 'commander';

interface ListOptions {
  config?: string;
  json?: boolean;
  pending?: boolean;
  dead?: boolean;
  recent?: string;
  bodies?: boolean;
}

function parseCount(value: string, what: string): number {
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1)
    throw new Error(`${what} must be a whole number from 1 to 999999, got "${value}"`);
  return Number(value);
}

export function register(parent: Command): void {
  const outbox = parent
    .command('outbox')
    .description('show the outbox of Settlements, Cancels and Voids (pending, dead, recent), or retry a dead row')
    .option('--config <file>', 'site configuration file (default: QRVEND_CONFIG, else the defaults); gives store.path')
    .option('--json', 'print JSON')
    .option('--pending', 'only rows still being retried')
    .option('--dead', 'only dead-lettered rows (waiting for a person)')
    .option('--recent <n>', 'how many rows to show, newest first (default 20)')
    .option('--bodies', 'also print each request body')
    .action(async (opts: ListOptions) => {
      const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
      const { loadConfig, warnRejectedOverlay } = await import('../../config/load.js');
      const { readOutbox } = await import('../../ledger/admin.js');
      const { formatListing } = await import('../../ledger/outbox-report.js');
      if (opts.pending && opts.dead)
        throw new QrvendError(ErrorCodes.CLI_USAGE, '--pending and --dead exclude each other', {
          hint: 'give one of them, or neither for all rows',
        });
      let limit: number;
      try {
        limit = opts.recent === undefined ? 20 : parseCount(opts.recent, '--recent');
      } catch (err) {
        throw new QrvendError(ErrorCodes.CLI_USAGE, (err as Error).message);
      }
      const loaded = loadConfig({ file: opts.config });
      const { config } = loaded;
      warnRejectedOverlay(loaded.overlay);
      const status = opts.pending ? 'pending' : opts.dead ? 'dead' : undefined;
      const listing = readOutbox(config.store.path, { status, limit });
      process.stdout.write(
        formatListing(listing, { json: opts.json === true, bodies: opts.bodies === true, path: config.store.path }),
      );
    });

  outbox
    .command('retry')
    .description(
      'move a dead-lettered row back to pending, with a fresh retry window (after reconciling it with the gateway)',
    )
    .argument('<id>', 'the outbox row id, as `qrvend outbox --dead` lists it')
    .option('--config <file>', 'site configuration file (default: QRVEND_CONFIG, else the defaults); gives store.path')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { config?: string; json?: boolean }) => {
      const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
      const { loadConfig, warnRejectedOverlay } = await import('../../config/load.js');
      const { retryDeadOutboxRow } = await import('../../ledger/admin.js');
      if (!/^\d{1,15}$/.test(id) || Number(id) < 1) {
        throw new QrvendError(ErrorCodes.CLI_USAGE, `outbox row id must be a positive whole number, got "${id}"`, {
          hint: 'see the ids with `qrvend outbox --dead`',
        });
      }
      // Accept --config before or after `retry` (`qrvend outbox --config F retry 3` reads the parent's option).
      const parentOpts = outbox.opts<{ config?: string; json?: boolean }>();
      const loaded = loadConfig({ file: opts.config ?? parentOpts.config });
      const { config } = loaded;
      warnRejectedOverlay(loaded.overlay);
      const row = retryDeadOutboxRow(config.store.path, Number(id));
      const json = opts.json === true || parentOpts.json === true;
      process.stdout.write(
        json
          ? `${JSON.stringify({ ok: true, id: row.id, txId: row.txId, op: row.op, status: row.status })}\n`
          : `outbox row ${row.id} (${row.op} for ${row.txId}) is pending again\n`,
      );
    });
}
