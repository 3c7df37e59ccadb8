/**
 * Text and JSON output of `qrvend outbox` (bodies only on request: they are long, not secret).
 * Ids, errors and bodies came from outside (a wallet, the gateway): the text output escapes their
 * control characters (JSON output escapes them by itself).
 */
import { escapeForTerminal as safe } from '../core/terminal-text.js';
import type { OutboxListing } from './admin.js';
import type { OutboxRow } from './types.js';

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function rowJson(row: OutboxRow, bodies: boolean): Record<string, unknown> {
  return {
    id: row.id,
    txId: row.txId,
    op: row.op,
    status: row.status,
    attempts: row.attempts,
    enqueuedAt: iso(row.enqueuedAtMs),
    windowStartedAt: iso(row.windowStartedAtMs),
    nextAttemptAt: row.status === 'pending' ? iso(row.nextAttemptAtMs) : null,
    doneAt: iso(row.doneAtMs),
    deadAt: iso(row.deadAtMs),
    lastError: row.lastError,
    lastCode: row.lastCode,
    ...(bodies ? { body: row.body } : {}),
  };
}

export function formatListing(
  listing: OutboxListing,
  options: { json: boolean; bodies: boolean; path: string },
): string {
  const { counts, rows } = listing;
  if (options.json) {
    return `${JSON.stringify({
      ledger: options.path,
      pending: counts.pending,
      dead: counts.dead,
      oldestPendingAt: iso(counts.oldestPendingAtMs),
      rows: rows.map((r) => rowJson(r, options.bodies)),
    })}\n`;
  }
  const lines = [
    `ledger ${safe(options.path)}: ${counts.pending} pending, ${counts.dead} ` +
      `dead${counts.oldestPendingAtMs === null ? '' : `, oldest pending since ${iso(counts.oldestPendingAtMs)}`}`,
  ];
  if (rows.length === 0) lines.push('(no rows)');
  for (const row of rows) {
    const when =
      row.status === 'pending'
        ? `next ${iso(row.nextAttemptAtMs)}`
        : row.status === 'dead'
          ? `dead ${iso(row.deadAtMs)}`
          : `done ${iso(row.doneAtMs)}`;
    const error = row.lastError === null ? '' : `  last: ${safe(row.lastError)}`;
    lines.push(
      `#${row.id}  ${row.status.padEnd(7)} ${row.op.padEnd(10)} ${safe(row.txId)}  attempts ${row.attempts}  ` +
        `${when}${error}`,
    );
    if (options.bodies) lines.push(`    ${safe(row.body)}`);
  }
  return `${lines.join('\n')}\n`;
}
