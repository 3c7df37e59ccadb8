/**
 * Request bodies as the gateway receives them: every amount (BasicInfo.Amount, each Price, the
 * amounts of a PaymentInfo qrvend composed) written with MachineInfo.DecimalPlace decimals, a
 * received PaymentInfo inserted as its exact text, everything else as JSON.stringify writes it.
 */
import { minorOf, wireAmount } from './amount-text.js';
import { RawJson, stringifyWire } from './raw-json.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawJson);

function withAmount(object: unknown, key: string, dp: number): unknown {
  if (!isObject(object) || typeof object[key] !== 'number') return object;
  const value = object[key] as number;
  // Something no builder produces (an amount beyond exact minor units) is left as JavaScript writes it.
  if (!Number.isSafeInteger(minorOf(value, dp))) return object;
  return { ...object, [key]: wireAmount(value, dp) };
}

/** Decimal places of a request: its own MachineInfo.DecimalPlace (the member that declares them), else 2. */
export function decimalPlacesOf(request: object): number {
  const dp = (request as { MachineInfo?: { DecimalPlace?: unknown } | null } | null)?.MachineInfo?.DecimalPlace;
  return typeof dp === 'number' && Number.isInteger(dp) && dp >= 0 && dp <= 10 ? dp : 2;
}

/** The exact JSON text to send for a request object built by the envelope's builders. */
export function encodeRequest(request: object, decimalPlaces: number = decimalPlacesOf(request)): string {
  if (!isObject(request)) return stringifyWire(request);
  const body: Json = { ...request };
  body.BasicInfo = withAmount(body.BasicInfo, 'Amount', decimalPlaces);
  for (const list of ['Products', 'Product']) {
    if (Array.isArray(body[list]))
      body[list] = (body[list] as unknown[]).map((item) => withAmount(item, 'Price', decimalPlaces));
  }
  if (isObject(body.PaymentInfo))
    body.PaymentInfo = withAmount(
      withAmount(body.PaymentInfo, 'AuthAmount', decimalPlaces),
      'SettAmount',
      decimalPlaces,
    );
  return stringifyWire(body);
}
