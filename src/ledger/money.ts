/**
 * Amounts cross the ledger's edge as major-unit numbers (1.5 = 1.50 EUR) and are stored as integer
 * minor units: sums of vends stay exact, and an amount that does not fit the currency's decimal
 * places is refused instead of being rounded silently.
 */
import { ErrorCodes, QrvendError } from '../core/errors.js';

export function toMinor(amount: number, decimalPlaces: number, what: string): number {
  const scaled = amount * 10 ** decimalPlaces;
  const minor = Math.round(scaled);
  if (!Number.isFinite(amount) || amount < 0 || Math.abs(scaled - minor) > 1e-6 || !Number.isSafeInteger(minor)) {
    throw new QrvendError(
      ErrorCodes.INTERNAL,
      `${what} ${amount} is not a non-negative amount with at most ${decimalPlaces} decimal places`,
      {
        hint: 'amounts must be rounded to machine.decimalPlaces before they reach the ledger',
      },
    );
  }
  return minor;
}

export function toMajor(minor: number, decimalPlaces: number): number {
  // Division by a power of ten gives the nearest double to the decimal value (e.g. 150 / 100 = 1.5).
  return minor / 10 ** decimalPlaces;
}

export function toMinorOrNull(amount: number | null, decimalPlaces: number, what: string): number | null {
  return amount === null ? null : toMinor(amount, decimalPlaces, what);
}

export function toMajorOrNull(minor: number | null, decimalPlaces: number): number | null {
  return minor === null ? null : toMajor(minor, decimalPlaces);
}
