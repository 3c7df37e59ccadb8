/**
 * What the simulated VMC actually did, kept so a checker can compare it with the gateway's ledger:
 * for each session, every selection, what the reader approved, and what was dispensed.
 */
export type SimVendOutcome =
  | 'pending' // still waiting for an answer or a result
  | 'denied' // the reader answered C,VEND,-1
  | 'success' // dispensed: the consumer owes the approved amount
  | 'failed' // approved but not dispensed (c,ERR,VEND 3)
  | 'cancelled' // the consumer cancelled before approval (c,ERR,VEND 1)
  | 'reset'; // the VMC or the board reset during the vend: after an approval, a dispense (MDB 4.2 7.4.7)

export interface SimVendRecord {
  item: number;
  price: number;
  /** The amount the reader approved (C,VEND,<amount>); null when never approved. */
  approved: number | null;
  outcome: SimVendOutcome;
}

export type SimSessionEnd =
  | 'open'
  | 'complete' // the VMC ended it (session complete, or the always-idle vend is over)
  | 'consumer-cancel'
  | 'reader-stop' // the reader sent C,STOP
  | 'reader-off' // the reader disabled itself (C,0)
  | 'disabled' // the VMC disabled the reader
  | 'vmc-reset'
  | 'board-reset';

export interface SimSessionRecord {
  id: number;
  /** funded: opened by C,START; always-idle: a selection without a session. */
  kind: 'funded' | 'always-idle';
  funds: number | null;
  vends: SimVendRecord[];
  end: SimSessionEnd;
}

/**
 * A vend the consumer owes: dispensed (success), or reset between the approval and its result,
 * which MDB 4.2 7.4.7 makes a VEND SUCCESS (the VMC dispensed and lost the result in the reset).
 */
export function owedVend(v: SimVendRecord): boolean {
  return v.outcome === 'success' || (v.outcome === 'reset' && v.approved !== null);
}

/** What a checker needs: the money the VMC dispensed against, per session. */
export function dispensedTotal(session: SimSessionRecord): number {
  return session.vends.filter(owedVend).reduce((sum, v) => sum + (v.approved ?? 0), 0);
}
