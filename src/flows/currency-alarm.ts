/**
 * The alarm GATEWAY_CURRENCY_MISMATCH (docs/payments.md, "Answers in another currency"): the
 * gateway approved in another currency than asked, a Static QR Authorization or a Dynamic QR
 * payment. Read as a decline (src/gateway/currency-check.ts) by both flows; this names the answer
 * for a person, because a gateway set up in another currency fails every sale the same way until
 * someone corrects the machine's or the merchant's currency.
 */
import type { FlowContext } from './context.js';

export interface CurrencyMismatch {
  txId: string;
  /** What the gateway approved: `Authorization`, or `Dynamic QR payment`. */
  operation: string;
  declineCode: number;
  /** `CODE/NUMERIC` as asked and as answered (checked characters only). */
  asked: string;
  answered: string;
}

/** Logs the mismatch at error level and raises the alarm; `consequence` says what qrvend did about it. */
export function raiseCurrencyMismatch(
  ctx: Pick<FlowContext, 'log' | 'alarm'>,
  m: CurrencyMismatch,
  consequence: string,
  fields: Record<string, unknown> = {},
): void {
  const detail =
    `the gateway approved ${m.operation} ${m.txId} in ${m.answered} when ${m.asked} was asked; read here as declined ` +
    `(code ${m.declineCode}) and ${consequence}. Check machine.currencyCode and machine.currencyNumeric ` +
    "against the currency of the gateway's merchant account";
  const facts = { txId: m.txId, code: 'GATEWAY_CURRENCY_MISMATCH', declineCode: m.declineCode, asked: m.asked };
  ctx.log.error({ ...facts, answered: m.answered, ...fields }, detail);
  ctx.alarm?.('GATEWAY_CURRENCY_MISMATCH', true, detail);
}

/** An approval in the currency asked: the gateway's currency is right again. */
export function currencyAgreed(ctx: Pick<FlowContext, 'alarm'>): void {
  ctx.alarm?.('GATEWAY_CURRENCY_MISMATCH', false, null);
}
