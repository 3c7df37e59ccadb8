/**
 * Transaction states and the transitions the ledger accepts, as a pure table (no I/O): the
 * ledger consults it inside each SQLite transaction, recovery consults it to decide what is owed.
 *
 * Static QR:  start_accepted -> authorizing -> authorized -> session_open -> settling -> settled
 *                   |               |  \-> declined          |  \-> cancelling -> cancelled
 *                   \---------------+-> cancelling (auth unanswered: Cancel IsGatewayTimeout)
 * Dynamic QR: qr_requested -> qr_issued -> paid -> vend_approved -> vended
 *                   |             |          \---------+-> voiding -> voided
 *                   |             \-> declined | expired | cancelled (nothing owed) | voiding
 *                   \-> declined | not_issued (the QR was never shown)
 * settling, cancelling and voiding -> dead when the outbox dead-letters the request; a manual
 * retry moves dead back to the state of the request it retries.
 */
/** The gateway requests the outbox delivers (re-exported by types.ts). */
export type OutboxOperation = 'Settlement' | 'Cancel' | 'Void';

export type Flow = 'static' | 'dynamic';

export type StaticState =
  | 'start_accepted'
  | 'authorizing'
  | 'authorized'
  | 'session_open'
  | 'settling'
  | 'cancelling'
  | 'settled'
  | 'cancelled'
  | 'declined'
  | 'dead';

export type DynamicState =
  | 'qr_requested'
  | 'qr_issued'
  | 'paid'
  | 'vend_approved'
  | 'vended'
  | 'voiding'
  | 'voided'
  | 'declined'
  | 'expired'
  | 'not_issued'
  | 'cancelled'
  | 'dead';

export type TxState = StaticState | DynamicState;

/** A request is in the outbox: the transaction waits for its delivery. */
export const DELIVERING_STATES: ReadonlySet<TxState> = new Set(['settling', 'cancelling', 'voiding']);

/** Nothing more will happen (dead waits for a person, see `qrvend outbox`). */
export const CLOSED_STATES: ReadonlySet<TxState> = new Set([
  'settled',
  'cancelled',
  'declined',
  'vended',
  'voided',
  'expired',
  'not_issued',
  'dead',
]);

export type TransitionName =
  | 'markAuthorizing'
  | 'markAuthorized'
  | 'markDeclined'
  | 'cancelAfterAuthTimeout'
  | 'openSession'
  | 'settleSession'
  | 'cancelSession'
  | 'recordQrIssued'
  | 'closeUnpaid'
  | 'recordPaid'
  | 'approveVend'
  | 'recordVended'
  | 'voidPayment'
  | 'delivered'
  | 'deadLettered'
  | 'manualRetry';

interface Rule {
  from: readonly TxState[];
  to: TxState;
}

const STATIC_RULES: Partial<Record<TransitionName, Rule>> = {
  markAuthorizing: { from: ['start_accepted'], to: 'authorizing' },
  markAuthorized: { from: ['authorizing'], to: 'authorized' },
  markDeclined: { from: ['authorizing'], to: 'declined' },
  cancelAfterAuthTimeout: { from: ['start_accepted', 'authorizing'], to: 'cancelling' },
  openSession: { from: ['authorized'], to: 'session_open' },
  settleSession: { from: ['session_open'], to: 'settling' },
  cancelSession: { from: ['authorized', 'session_open'], to: 'cancelling' },
};

const DYNAMIC_RULES: Partial<Record<TransitionName, Rule>> = {
  recordQrIssued: { from: ['qr_requested'], to: 'qr_issued' },
  recordPaid: { from: ['qr_issued'], to: 'paid' },
  approveVend: { from: ['paid'], to: 'vend_approved' },
  recordVended: { from: ['vend_approved'], to: 'vended' },
  voidPayment: { from: ['qr_issued', 'paid', 'vend_approved'], to: 'voiding' },
};

/** Where each outbox operation leaves a transaction once the gateway approved it. */
export const DELIVERED_STATE: Record<OutboxOperation, TxState> = {
  Settlement: 'settled',
  Cancel: 'cancelled',
  Void: 'voided',
};

/** The state a transaction waits in while a request of this operation is pending. */
export const DELIVERING_STATE: Record<OutboxOperation, TxState> = {
  Settlement: 'settling',
  Cancel: 'cancelling',
  Void: 'voiding',
};

/** Dynamic QR payments that closed without taking money, by how they ended. */
export type UnpaidResult = 'declined' | 'expired' | 'not_issued' | 'cancelled';
const UNPAID_FROM: Record<UnpaidResult, readonly DynamicState[]> = {
  declined: ['qr_requested', 'qr_issued'],
  not_issued: ['qr_requested'],
  expired: ['qr_issued'],
  cancelled: ['qr_issued'],
};

export type TransitionCheck =
  | { kind: 'apply'; to: TxState }
  /** The transaction is already where this call would take it (a repeat after a lost reply). */
  | { kind: 'already'; to: TxState }
  | { kind: 'refused'; reason: string };

/**
 * May `name` run on a transaction of `flow` in `state`? `target` names the outcome for the
 * transitions whose destination depends on the call (closeUnpaid's result, the retried operation).
 */
export function checkTransition(
  flow: Flow,
  state: TxState,
  name: TransitionName,
  target?: TxState | OutboxOperation,
): TransitionCheck {
  let rule: Rule | undefined;
  if (name === 'closeUnpaid') {
    const result = target as UnpaidResult;
    rule = flow === 'dynamic' && result in UNPAID_FROM ? { from: UNPAID_FROM[result], to: result } : undefined;
  } else if (name === 'delivered') {
    const op = target as OutboxOperation;
    rule = { from: [DELIVERING_STATE[op]], to: DELIVERED_STATE[op] };
  } else if (name === 'deadLettered') {
    rule = { from: [...DELIVERING_STATES], to: 'dead' };
  } else if (name === 'manualRetry') {
    rule = { from: ['dead'], to: DELIVERING_STATE[target as OutboxOperation] };
  } else {
    rule = (flow === 'static' ? STATIC_RULES : DYNAMIC_RULES)[name];
  }
  if (rule === undefined) return { kind: 'refused', reason: `${name} does not apply to a ${flow} QR transaction` };
  if (state === rule.to) return { kind: 'already', to: rule.to };
  if (rule.from.includes(state)) return { kind: 'apply', to: rule.to };
  return { kind: 'refused', reason: `${name} needs state ${rule.from.join(' or ')}, the transaction is ${state}` };
}

/** What recovery at start owes a transaction left in `state` (docs/decisions/sales-and-recovery.md). */
export type RecoveryAction =
  | 'none' // closed, or its request already waits in the outbox
  | 'cancel-timeout' // Start or Authorization without an answer: Cancel {IsGatewayTimeout: true}
  | 'close-session' // authorized: Settlement for the successful vends, or Cancel when none
  | 'not-issued' // GenerateQR never answered: the QR was never shown, nothing owed
  | 'void'; // a dynamic payment that may have been approved but was not vended

export function recoveryActionFor(state: TxState): RecoveryAction {
  switch (state) {
    case 'start_accepted':
    case 'authorizing':
      return 'cancel-timeout';
    case 'authorized':
    case 'session_open':
      return 'close-session';
    case 'qr_requested':
      return 'not-issued';
    case 'qr_issued':
    case 'paid':
    case 'vend_approved':
      return 'void';
    default:
      return 'none';
  }
}
