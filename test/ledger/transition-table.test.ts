/**
 * The ledger's transition table (src/ledger/states.ts) against the state diagram of its header
 * and of docs/decisions/sales-and-recovery.md, written out here independently: every transition, from every state,
 * in both flows. A rule that lets a transaction move from a state it must not (a second
 * Settlement, a Void after a Cancel) or refuses a legal move fails here by name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkTransition,
  CLOSED_STATES,
  DELIVERING_STATES,
  recoveryActionFor,
  type Flow,
  type TransitionName,
  type TxState,
} from '../../src/ledger/states.js';
import type { OutboxOperation } from '../../src/ledger/types.js';

const ALL: TxState[] = [
  'start_accepted',
  'authorizing',
  'authorized',
  'session_open',
  'settling',
  'cancelling',
  'settled',
  'cancelled',
  'declined',
  'dead',
  'qr_requested',
  'qr_issued',
  'paid',
  'vend_approved',
  'vended',
  'voiding',
  'voided',
  'expired',
  'not_issued',
];

interface Rule {
  flow: Flow;
  name: TransitionName;
  target?: TxState | OutboxOperation;
  from: TxState[];
  to: TxState;
}

const OPS: Array<[OutboxOperation, TxState, TxState]> = [
  ['Settlement', 'settling', 'settled'],
  ['Cancel', 'cancelling', 'cancelled'],
  ['Void', 'voiding', 'voided'],
];

const RULES: Rule[] = [
  { flow: 'static', name: 'markAuthorizing', from: ['start_accepted'], to: 'authorizing' },
  { flow: 'static', name: 'markAuthorized', from: ['authorizing'], to: 'authorized' },
  { flow: 'static', name: 'markDeclined', from: ['authorizing'], to: 'declined' },
  { flow: 'static', name: 'cancelAfterAuthTimeout', from: ['start_accepted', 'authorizing'], to: 'cancelling' },
  { flow: 'static', name: 'openSession', from: ['authorized'], to: 'session_open' },
  { flow: 'static', name: 'settleSession', from: ['session_open'], to: 'settling' },
  { flow: 'static', name: 'cancelSession', from: ['authorized', 'session_open'], to: 'cancelling' },
  { flow: 'dynamic', name: 'recordQrIssued', from: ['qr_requested'], to: 'qr_issued' },
  { flow: 'dynamic', name: 'recordPaid', from: ['qr_issued'], to: 'paid' },
  { flow: 'dynamic', name: 'approveVend', from: ['paid'], to: 'vend_approved' },
  { flow: 'dynamic', name: 'recordVended', from: ['vend_approved'], to: 'vended' },
  { flow: 'dynamic', name: 'voidPayment', from: ['qr_issued', 'paid', 'vend_approved'], to: 'voiding' },
  { flow: 'dynamic', name: 'closeUnpaid', target: 'declined', from: ['qr_requested', 'qr_issued'], to: 'declined' },
  { flow: 'dynamic', name: 'closeUnpaid', target: 'not_issued', from: ['qr_requested'], to: 'not_issued' },
  { flow: 'dynamic', name: 'closeUnpaid', target: 'expired', from: ['qr_issued'], to: 'expired' },
  { flow: 'dynamic', name: 'closeUnpaid', target: 'cancelled', from: ['qr_issued'], to: 'cancelled' },
  ...(['static', 'dynamic'] as Flow[]).flatMap((flow) => [
    ...OPS.map(([op, delivering, delivered]): Rule => ({
      flow,
      name: 'delivered',
      target: op,
      from: [delivering],
      to: delivered,
    })),
    ...OPS.map(([op, delivering]): Rule => ({ flow, name: 'manualRetry', target: op, from: ['dead'], to: delivering })),
    { flow, name: 'deadLettered', from: ['settling', 'cancelling', 'voiding'], to: 'dead' } as Rule,
  ]),
];

function expected(rule: Rule, state: TxState): string {
  if (state === rule.to) return `already ${rule.to}`;
  if (rule.from.includes(state)) return `apply ${rule.to}`;
  return 'refused';
}

function actual(flow: Flow, state: TxState, name: TransitionName, target?: TxState | OutboxOperation): string {
  const c = checkTransition(flow, state, name, target);
  return c.kind === 'refused' ? 'refused' : `${c.kind} ${c.to}`;
}

test('every transition of the diagram, from every state: applied, already there, or refused', () => {
  for (const rule of RULES) {
    for (const state of ALL) {
      assert.equal(
        actual(rule.flow, state, rule.name, rule.target),
        expected(rule, state),
        `${rule.flow} ${rule.name}(${rule.target ?? ''}) from ${state}`,
      );
    }
  }
});

test('a transition of the other flow is refused from every state, and says it does not apply', () => {
  const staticOnly = RULES.filter(
    (r) => r.flow === 'static' && !['delivered', 'deadLettered', 'manualRetry'].includes(r.name),
  );
  const dynamicOnly = RULES.filter(
    (r) => r.flow === 'dynamic' && !['delivered', 'deadLettered', 'manualRetry'].includes(r.name),
  );
  for (const [rules, other] of [
    [staticOnly, 'dynamic'],
    [dynamicOnly, 'static'],
  ] as const) {
    for (const rule of rules) {
      for (const state of ALL) {
        const c = checkTransition(other, state, rule.name, rule.target);
        assert.deepEqual(
          c,
          { kind: 'refused', reason: `${rule.name} does not apply to a ${other} QR transaction` },
          `${other} ${rule.name} from ${state}`,
        );
      }
    }
  }
  // closeUnpaid only knows the four unpaid results.
  assert.equal(checkTransition('dynamic', 'qr_issued', 'closeUnpaid', 'vended').kind, 'refused');
  assert.equal(checkTransition('dynamic', 'qr_issued', 'closeUnpaid', 'voided').kind, 'refused');
});

test('a refusal names the transition, the states it needs and the state the transaction is in', () => {
  assert.deepEqual(checkTransition('static', 'settled', 'settleSession'), {
    kind: 'refused',
    reason: 'settleSession needs state session_open, the transaction is settled',
  });
  assert.deepEqual(checkTransition('dynamic', 'voided', 'voidPayment'), {
    kind: 'refused',
    reason: 'voidPayment needs state qr_issued or paid or vend_approved, the transaction is voided',
  });
});

test('delivering and closed states, and what recovery owes each state', () => {
  assert.deepEqual([...DELIVERING_STATES].sort(), ['cancelling', 'settling', 'voiding']);
  assert.deepEqual([...CLOSED_STATES].sort(), [
    'cancelled',
    'dead',
    'declined',
    'expired',
    'not_issued',
    'settled',
    'vended',
    'voided',
  ]);
  const owed: Record<TxState, string> = {
    start_accepted: 'cancel-timeout',
    authorizing: 'cancel-timeout',
    authorized: 'close-session',
    session_open: 'close-session',
    qr_requested: 'not-issued',
    qr_issued: 'void',
    paid: 'void',
    vend_approved: 'void',
    settling: 'none',
    cancelling: 'none',
    voiding: 'none',
    settled: 'none',
    cancelled: 'none',
    declined: 'none',
    dead: 'none',
    vended: 'none',
    voided: 'none',
    expired: 'none',
    not_issued: 'none',
  };
  for (const state of ALL) assert.equal(recoveryActionFor(state), owed[state], state);
});
