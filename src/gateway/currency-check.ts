/**
 * An answer in another currency than the request's (docs/decisions/hardening.md item 5). Amounts in qrvend are
 * numbers in the machine's currency; an approval of "2.00 USD" for a request of "2.00 EUR" is not
 * an approval of what was asked, so it is read as a decline (FormatError, not retried) and logged.
 */
import { DeclineCodes } from './protocol/codes.js';
import type { GatewayOutcome } from './outcome.js';

interface Currency {
  code: unknown;
  numeric: unknown;
}

/**
 * The request's BasicInfo currency; an answer that carries a BasicInfo (an Authorization's, whose
 * answer may add members, or an Inquiry's: docs/decisions/gateway-interface.md) is read the same way.
 */
function currencyOf(value: unknown): Currency | null {
  const basic = (value as { BasicInfo?: { CurrencyCode?: unknown; CurrencyNumeric?: unknown } | null } | null)
    ?.BasicInfo;
  if (basic === undefined || basic === null) return null;
  return { code: basic.CurrencyCode, numeric: basic.CurrencyNumeric };
}

/** A currency member as the gateway wrote it, for a log line or a person: letters and digits only, bounded. */
function shown(value: unknown): string {
  const text = typeof value === 'string' || typeof value === 'number' ? String(value).replace(/[^A-Za-z0-9]/g, '') : '';
  return text === '' ? '?' : text.slice(0, 8);
}

const currencyText = (c: Currency) => `${shown(c.code)}/${shown(c.numeric)}`;

/** The outcome, or a decline when the approved answer names another currency than the request. */
export function checkAnswerCurrency<R>(
  requestText: string,
  outcome: GatewayOutcome<R>,
): { outcome: GatewayOutcome<R>; mismatch: { asked: Currency; answered: Currency } | null } {
  if (outcome.kind !== 'approved') return { outcome, mismatch: null };
  let asked: Currency | null;
  try {
    asked = currencyOf(JSON.parse(requestText));
  } catch {
    asked = null;
  }
  const answered = currencyOf(outcome.response);
  if (asked === null || answered === null) return { outcome, mismatch: null };
  const same = (a: unknown, b: unknown) => a === undefined || a === null || b === undefined || b === null || a === b;
  if (same(asked.code, answered.code) && same(asked.numeric, answered.numeric)) return { outcome, mismatch: null };
  const currencies = { asked: currencyText(asked), answered: currencyText(answered) };
  return {
    outcome: {
      kind: 'declined',
      code: DeclineCodes.FormatError,
      message: `answer in another currency (${currencies.answered}) than asked (${currencies.asked})`,
      response: outcome.response,
      elapsedMs: outcome.elapsedMs,
      ...(outcome.bodyText !== undefined ? { bodyText: outcome.bodyText } : {}),
      heldFunds: true,
      currencies,
    },
    mismatch: { asked, answered },
  };
}
