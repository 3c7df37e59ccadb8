/**
 * PaymentInfo as JSON text. The gateway's PaymentInfo goes back exactly as it came
 * (docs/decisions/gateway-interface.md: `5.00` stays `5.00`, members keep their order and spelling), so it travels
 * through
 * qrvend, the ledger and restarts as the text of the member, never as a re-serialized object.
 */
import type { GatewayOutcome } from '../outcome.js';
import type { PaymentInfo } from '../protocol/index.js';
import { exactMinor, wireAmount, type ExactMinor } from './amount-text.js';
import { memberText } from './member-text.js';
import { RawJson, stringifyWire } from './raw-json.js';

/** PaymentInfo of a Cancel/Void after an Authorization/Inquiry that was never answered. */
export const GATEWAY_TIMEOUT_PAYMENT_INFO = new RawJson('{"IsGatewayTimeout":true}');

/**
 * The PaymentInfo member of a gateway answer, as the exact text received; null when the answer
 * has none. Outcomes built without their text (unit tests) fall back to the parsed object.
 */
export function receivedPaymentInfo(
  outcome: Pick<
    Extract<GatewayOutcome<{ PaymentInfo?: unknown }>, { kind: 'approved' | 'declined' }>,
    'response' | 'bodyText'
  >,
): RawJson | null {
  if (outcome.bodyText !== undefined) {
    const text = memberText(outcome.bodyText, 'PaymentInfo');
    return text === null || text === 'null' ? null : new RawJson(text);
  }
  const value = outcome.response.PaymentInfo;
  return value == null ? null : new RawJson(JSON.stringify(value));
}

/** A PaymentInfo qrvend composes itself (Inquiry before any approval), amounts with the currency's decimals. */
export function composePaymentInfo(members: PaymentInfo, decimalPlaces: number): RawJson {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(members)) {
    if (value === undefined || value === null) continue;
    out[key] =
      (key === 'AuthAmount' || key === 'SettAmount') && typeof value === 'number'
        ? wireAmount(value, decimalPlaces)
        : value;
  }
  return new RawJson(stringifyWire(out));
}

/** PaymentInfo.AuthAmount read exactly from the text, or null when it carries none. */
export function authAmountOf(paymentInfo: RawJson, decimalPlaces: number): ExactMinor | null {
  const text = memberText(paymentInfo.text, 'AuthAmount');
  return text === null ? null : exactMinor(text, decimalPlaces);
}
