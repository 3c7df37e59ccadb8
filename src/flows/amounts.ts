/** Money arithmetic of the flows, in minor units where it matters (0.1 + 0.2 must be 0.30). */
import type { SoldItem } from '../gateway/envelope.js';

/** Sum in minor units, so 0.1 + 0.2 is 0.30 and not 0.30000000000000004. */
export function totalOf(items: readonly SoldItem[], decimalPlaces: number): number {
  const scale = 10 ** decimalPlaces;
  return items.reduce((minor, i) => minor + Math.round(i.price * scale), 0) / scale;
}

/** Rounds down to the currency's decimal places: an amount capped by a balance must never exceed it. */
export function floorAmount(amount: number, decimalPlaces: number): number {
  const scale = 10 ** decimalPlaces;
  // The epsilon keeps 0.29 * 100 = 28.999999999999996 at 29.
  return Math.floor(amount * scale + 1e-6) / scale;
}

/** Authorization amount: the configured pre-auth, capped by the consumer's Balance when given (never above it). */
export function authorizationAmount(
  preauthAmount: number,
  balance: number | null | undefined,
  decimalPlaces: number,
): number {
  const capped = balance === null || balance === undefined ? preauthAmount : Math.min(preauthAmount, balance);
  return floorAmount(capped, decimalPlaces);
}
