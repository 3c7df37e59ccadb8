/**
 * Building blocks shared by every gateway schema: bounded strings, the integer widths of the
 * interface (int16/int32/int64), amounts, the ddMMyyHHmmss date-time, JSON text. Each rule of
 * the seed is written once here and reused by the object and operation schemas.
 */
import { z } from 'zod';

/** A string of at most `max` characters (the seed's "max length" / Limits table). */
export const maxText = (max: number) => z.string().max(max, `must be at most ${max} characters`);

/**
 * `text` cut to at most `max` UTF-16 code units (how the seed's lengths are counted, like
 * String.length and a .NET gateway), at a code point boundary: a surrogate pair is never split.
 * With `ellipsis`, a cut text ends in "…" within the same limit.
 */
export function truncateText(text: string, max: number, ellipsis = false): string {
  if (text.length <= max) return text;
  const room = ellipsis ? max - 1 : max;
  let out = '';
  for (const ch of text) {
    if (out.length + ch.length > room) break;
    out += ch;
  }
  return ellipsis ? `${out}…` : out;
}

/** A mandatory string: at least one character, at most `max`. */
export const requiredText = (max: number) =>
  z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`);

export const int16 = z.number().int('must be an integer').min(-32768).max(32767);
export const int32 = z.number().int('must be an integer').min(-2147483648).max(2147483647);
/** int64 as JSON numbers: JavaScript represents exactly only the safe-integer range. */
export const int64 = z.number().int('must be an integer').min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER);

/** A double amount in major units (0.01 is one cent); never negative. */
export const amount = z.number().finite('must be a finite number').min(0, 'must not be negative');

/** ISO 4217 alpha-3 and numeric-3. */
export const currencyCode = z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 alpha-3 code such as EUR');
export const currencyNumeric = z.string().regex(/^\d{3}$/, 'must be an ISO 4217 numeric-3 code such as 978');

/** A string that holds JSON text (CustomData members). */
export const jsonText = z.string().refine((s) => {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}, 'must be a string holding JSON text');

const DATE_TIME = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/;

/** True when `s` is a real calendar moment written ddMMyyHHmmss (years 2000-2099). */
export function isGatewayDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (m === null) return false;
  const [dd, mm, yy, hh, mi, ss] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  if (mm < 1 || mm > 12 || hh > 23 || mi > 59 || ss > 59 || dd < 1) return false;
  const daysInMonth = new Date(2000 + yy, mm, 0).getDate();
  return dd <= daysInMonth;
}

/** The interface's date-time: ddMMyyHHmmss in the machine's local time. */
export const gatewayDateTime = z.string().refine(isGatewayDateTime, 'must be a date-time written ddMMyyHHmmss');

const two = (n: number) => String(n).padStart(2, '0');

/** Formats `date` as ddMMyyHHmmss in local time (docs/decisions/gateway-interface.md). */
export function formatGatewayDateTime(date: Date): string {
  return (
    two(date.getDate()) +
    two(date.getMonth() + 1) +
    two(date.getFullYear() % 100) +
    two(date.getHours()) +
    two(date.getMinutes()) +
    two(date.getSeconds())
  );
}

/**
 * Rounds an amount to `decimalPlaces` (MachineInfo.DecimalPlace), half away from zero.
 * toPrecision(15) first removes binary noise, so 1.005 rounds to 1.01 as a person expects.
 */
export function roundAmount(value: number, decimalPlaces: number): number {
  if (!Number.isInteger(decimalPlaces) || decimalPlaces < 0 || decimalPlaces > 10) {
    throw new RangeError(`decimalPlaces must be an integer 0..10, got ${decimalPlaces}`);
  }
  const factor = 10 ** decimalPlaces;
  const scaled = Number((Math.abs(value) * factor).toPrecision(15));
  const rounded = (Math.sign(value) * Math.round(scaled)) / factor;
  return rounded === 0 ? 0 : rounded; // no -0 on the wire
}

/** True when `value` carries no more than `decimalPlaces` decimals. */
export function hasDecimalPlaces(value: number, decimalPlaces: number): boolean {
  return roundAmount(value, decimalPlaces) === value;
}
