/**
 * Amounts on the wire are decimal strings in major units (`1.50`). Arithmetic (funds left, sums)
 * happens in integer minor units so that 0.1 + 0.2 never decides whether a vend is approved.
 */

/** Up to 7 integer digits and 3 decimals: more than any vending price, small enough to be exact. */
const AMOUNT = /^\d{1,7}(?:\.\d{1,3})?$/;

/** Parses a wire amount; null when it is not a plain non-negative decimal. */
export function parseAmount(text: string): number | null {
  if (!AMOUNT.test(text)) return null;
  return Number(text);
}

export function formatAmount(amount: number, decimalPlaces: number): string {
  return amount.toFixed(decimalPlaces);
}

export function toMinor(amount: number, decimalPlaces: number): number {
  return Math.round(amount * 10 ** decimalPlaces);
}

export function toMajor(minor: number, decimalPlaces: number): number {
  return Number((minor / 10 ** decimalPlaces).toFixed(decimalPlaces));
}
