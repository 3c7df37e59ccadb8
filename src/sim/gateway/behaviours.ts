/**
 * Deterministic behaviours: what the simulated gateway decides, chosen by the amount (a table
 * a demo or a test can rely on, see docs/payments.md, gateway simulator) or by rules set at runtime through
 * the control endpoint. Rules are checked first, in order; then the amount table.
 */
import type { GatewayOperation } from '../../gateway/outcome.js';
import { DeclineCodes } from '../../gateway/protocol/index.js';

export type Behaviour =
  | { kind: 'approve' }
  /**
   * Approved, but the answer's BasicInfo names this currency instead of the one asked (a merchant
   * account set up in another currency). A Static QR Authorization holds the amount; a Dynamic QR
   * (a GenerateQR rule) is paid at the first Inquiry, each approving Inquiry naming this currency.
   */
  | { kind: 'approve-in-currency'; currencyCode: string; currencyNumeric: string }
  | { kind: 'decline'; code: number; message?: string }
  /** Dynamic QR: Inquiry answers 993 (pending) `polls` times, then Approved. */
  | { kind: 'pay-after-polls'; polls: number }
  /** Dynamic QR: pending until `ms` after GenerateQR, then Approved. */
  | { kind: 'pay-after-ms'; ms: number }
  /** Dynamic QR: always pending; the QR expires at the last polling. */
  | { kind: 'never-pay' }
  /** Dynamic QR: the consumer's payment is declined with `code` at the first Inquiry. */
  | { kind: 'decline-at-inquiry'; code: number }
  /** Dynamic QR: paid at the first Inquiry, but for `amount` (AuthAmount), e.g. less than the QR asked. */
  | { kind: 'pay-amount'; amount: number };

/** The behaviours that decide how a dynamic QR gets paid (looked up at GenerateQR). */
export type PaymentBehaviour = Extract<
  Behaviour,
  | {
      kind: 'pay-after-polls' | 'pay-after-ms' | 'never-pay' | 'decline-at-inquiry' | 'approve' | 'pay-amount';
    }
  | Extract<Behaviour, { kind: 'approve-in-currency' }>
>;

export interface BehaviourRule {
  op: GatewayOperation;
  /** Only this transaction; absent = any. */
  transactionId?: string;
  /** Only this BasicInfo.Amount; absent = any. */
  amount?: number;
  /** Apply at most this many times; absent = unlimited. */
  times?: number;
  behaviour: Behaviour;
}

const DECLINE_BY_CENTS = new Set<number>([
  DeclineCodes.InsufficientFunds,
  DeclineCodes.TransactionIdUnknown,
  DeclineCodes.CountLimitExceeded,
  DeclineCodes.AmountLimitExceeded,
  DeclineCodes.SuspectedFraud,
  DeclineCodes.GeneralSystemFailure,
  DeclineCodes.InvalidAmount,
  DeclineCodes.FormatError,
  DeclineCodes.NotAllowed,
  DeclineCodes.MachineNotResponding,
  DeclineCodes.UnknownMachine,
]);

function split(amount: number): { units: number; cents: number } {
  const minor = Math.round(amount * 100);
  return { units: Math.floor(minor / 100), cents: minor % 100 };
}

/**
 * The amount table (documented in docs/payments.md, gateway simulator):
 * - Authorization or GenerateQR of 9.CC, CC a decline code (1-9, 30, 50): Declined with code CC.
 * - Settlement of 8.CC, CC a decline code: Declined with code CC.
 * - GenerateQR of 8.CC, CC a decline code: the QR is declined with code CC at the first Inquiry.
 * - GenerateQR of 7.77: never paid. GenerateQR of 7.01-7.60: paid after CC pending polls.
 * - Anything else: Approved (a dynamic QR is paid at the first Inquiry).
 */
export function amountBehaviour(op: GatewayOperation, amount: number): Behaviour {
  const { units, cents } = split(amount);
  const declineCode = DECLINE_BY_CENTS.has(cents) ? cents : null;
  if ((op === 'Authorization' || op === 'GenerateQR') && units === 9 && declineCode !== null)
    return { kind: 'decline', code: declineCode };
  if (op === 'Settlement' && units === 8 && declineCode !== null) return { kind: 'decline', code: declineCode };
  if (op === 'GenerateQR') {
    if (units === 8 && declineCode !== null) return { kind: 'decline-at-inquiry', code: declineCode };
    if (units === 7 && cents === 77) return { kind: 'never-pay' };
    if (units === 7 && cents >= 1 && cents <= 60) return { kind: 'pay-after-polls', polls: cents };
  }
  return { kind: 'approve' };
}

export class Behaviours {
  private rules: { rule: BehaviourRule; used: number }[] = [];

  setRules(rules: BehaviourRule[]): void {
    this.rules = rules.map((rule) => ({ rule: { ...rule }, used: 0 }));
  }

  addRules(rules: BehaviourRule[]): void {
    for (const rule of rules) this.rules.push({ rule: { ...rule }, used: 0 });
  }

  list(): BehaviourRule[] {
    return this.rules.map((r) => ({ ...r.rule }));
  }

  /** The behaviour for this request; a matching rule is consumed once. */
  decide(op: GatewayOperation, transactionId: string, amount: number): Behaviour {
    for (const entry of this.rules) {
      const { rule } = entry;
      if (rule.op !== op) continue;
      if (rule.transactionId !== undefined && rule.transactionId !== transactionId) continue;
      if (rule.amount !== undefined && rule.amount !== amount) continue;
      if (rule.times !== undefined && entry.used >= rule.times) continue;
      entry.used += 1;
      return rule.behaviour;
    }
    return amountBehaviour(op, amount);
  }
}
