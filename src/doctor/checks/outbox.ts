/**
 * The outbox (Settlements, Cancels and Voids waiting for the gateway): how many, how old, and how
 * many gave up. A growing or old queue means money is not being collected.
 */
import type { Check } from '../types.js';

const OLD_AFTER_MS = 60 * 60_000;

function age(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 2 * 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

export const outboxCheck: Check = {
  id: 'outbox',
  title: 'outbox depth',
  needsConfig: true,
  async run(ctx) {
    const look = ctx.ledger();
    if (look.kind === 'missing')
      return { status: 'OK', summary: 'no ledger yet: nothing queued', details: { pending: 0, dead: 0 } };
    if (look.kind === 'error' || look.inspection.integrity !== 'ok') {
      return {
        status: 'WARN',
        summary: 'not counted: the ledger could not be read (see the ledger check)',
        action: 'fix the ledger check first',
        details: {},
      };
    }
    const { pending, dead, oldestPendingAt } = look.inspection;
    const oldestAgeMs =
      oldestPendingAt === null ? null : Math.max(0, ctx.now().getTime() - Date.parse(oldestPendingAt));
    const details = { pending, dead, oldestPendingAt, oldestAgeMs };
    const summary =
      pending === 0
        ? `empty (${dead} dead-lettered)`
        : `${pending} pending, oldest ${age(oldestAgeMs ?? 0)} old, ${dead} dead-lettered`;
    if (dead > 0) {
      return {
        status: 'WARN',
        summary,
        action:
          'items the gateway never accepted within store.retryWindowHours: ' +
          'list them with qrvend outbox and settle them with the provider',
        details,
      };
    }
    if (oldestAgeMs !== null && oldestAgeMs > OLD_AFTER_MS) {
      return {
        status: 'WARN',
        summary,
        action: 'the outbox is not draining: check the gateway check and qrvend-logs --level warn',
        details,
      };
    }
    return { status: 'OK', summary, details };
  },
};
