/**
 * Amounts on the wire (docs/decisions/gateway-interface.md): written as doubles with the currency's decimals
 * (`5.00`, `1.50`, `234.0` when the currency has none), and read back exactly from the text the
 * gateway sent, never through a double (`0.29` * 100 is 28.999999999999996 in floating point).
 */
import { RawJson } from './raw-json.js';

/** Integer minor units of a major-unit amount that is on the currency's grid (1.5, 2 -> 150, 200). */
export function minorOf(major: number, decimalPlaces: number): number {
  // toPrecision(15) removes the binary noise of the multiplication before rounding.
  return Math.round(Number((major * 10 ** decimalPlaces).toPrecision(15)));
}

/** `minor` written with `decimalPlaces` decimals, and at least one (234 with 0 -> "234.0"). */
export function amountText(minor: number, decimalPlaces: number): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`amount ${minor} (minor units) is not a safe integer`);
  const sign = minor < 0 ? '-' : '';
  const digits = String(Math.abs(minor)).padStart(decimalPlaces + 1, '0');
  if (decimalPlaces === 0) return `${sign}${digits}.0`;
  return `${sign}${digits.slice(0, -decimalPlaces)}.${digits.slice(-decimalPlaces)}`;
}

/** A major-unit amount as the JSON number the gateway expects (1.5 with 2 decimals -> 1.50). */
export function wireAmount(major: number, decimalPlaces: number): RawJson {
  return new RawJson(amountText(minorOf(major, decimalPlaces), decimalPlaces));
}

const JSON_NUMBER = /^(-?)(0|[1-9]\d*)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

export interface ExactMinor {
  /** The amount in minor units, rounded down (toward minus infinity) when it has more decimals. */
  minor: bigint;
  /** False when the amount had decimals beyond `decimalPlaces` (they were cut off). */
  exact: boolean;
}

/**
 * Reads the JSON number `text` (as received) into minor units without
 * floating point. Null when `text` is not a JSON number.
 */
export function exactMinor(text: string, decimalPlaces: number): ExactMinor | null {
  const m = JSON_NUMBER.exec(text.trim());
  if (m === null) return null;
  const [, sign, int, frac = '', exp = '0'] = m;
  const exponent = Number(exp);
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 400) return null;
  let digits = BigInt(`${int}${frac}`);
  if (sign === '-') digits = -digits;
  const shift = exponent - frac.length + decimalPlaces;
  if (shift >= 0) return { minor: digits * 10n ** BigInt(shift), exact: true };
  const divisor = 10n ** BigInt(-shift);
  let q = digits / divisor; // truncates toward zero
  const r = digits % divisor;
  if (r !== 0n && digits < 0n) q -= 1n;
  return { minor: q, exact: r === 0n };
}
