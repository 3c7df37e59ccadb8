/**
 * `start` for the fleet simulation's machines (`npm run fleet-sim -- --handlers
 * dist/rigs/relay/fleet-handlers.js`), so the fleet simulation can drive Starts through
 * `qrvend relay`. Canned: every Start whose args are well formed and whose deadline has not passed
 * is answered Approved with its TransactionId echoed, as the machine's endpoint would answer an
 * accepted Start; a late one is refused TOO_LATE like a real machine; `start.confirm` is taken
 * (nothing to authorize). The voucher is not checked: these machines hold no trust file. (The real
 * decisions, vouchers and confirmations run in `npm run relay-bench` and the relay's tests.) The
 * relay needs a registry naming the simulated machines (`qrvend relay registry sign`).
 */
import { RelayedStartArgs } from '../../src/fleet/contract/commands.js';
import { RELAYED_START_TOLERANCE_MS } from '../../src/start/relayed.js';

import { StartConfirmArgs } from '../../src/fleet/contract/commands.js';

type Outcome = { ok: true; result: unknown } | { ok: false; code: 'BAD_ARGS' | 'TOO_LATE'; message: string };

export const handlers: Record<string, (args: unknown) => Outcome> = {
  'start.confirm'(args: unknown): Outcome {
    const parsed = StartConfirmArgs.safeParse(args);
    return parsed.success
      ? { ok: true, result: { authorized: parsed.data.txId } }
      : { ok: false, code: 'BAD_ARGS', message: 'start.confirm args do not match StartConfirmArgs' };
  },
  start(args: unknown): Outcome {
    const parsed = RelayedStartArgs.safeParse(args);
    if (!parsed.success) return { ok: false, code: 'BAD_ARGS', message: 'start args do not match RelayedStartArgs' };
    if (parsed.data.deadlineAt - Date.now() < RELAYED_START_TOLERANCE_MS)
      return { ok: false, code: 'TOO_LATE', message: "it reached the machine after the relay's deadline" };
    let transactionId: unknown;
    try {
      transactionId = (JSON.parse(parsed.data.body) as { TransactionId?: unknown }).TransactionId;
    } catch {
      transactionId = undefined;
    }
    const body = JSON.stringify({
      Status: { Verdict: 'Approved' },
      ...(typeof transactionId === 'string' ? { TransactionId: transactionId } : {}),
    });
    return { ok: true, result: { httpStatus: 200, contentType: 'application/json; charset=utf-8', body } };
  },
};
