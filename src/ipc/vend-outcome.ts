/**
 * Which vend outcomes the consumer pays for: one rule for the reader's session funds, the flows'
 * Settlement and Void decisions, the ledger's checks, recovery and the fleet's sale events.
 *
 * MDB 4.2, 7.4.7 (VEND SUCCESS): "A reset between VEND APPROVED and VEND SUCCESS shall be
 * interpreted as a VEND SUCCESS." The VMC dispensed and lost the result in its reset, so a vend
 * whose outcome is `reset` (c,ERR,VEND 5, c,STATUS,INACTIVE or a board restart after the approval)
 * is charged like a success. A failure (c,ERR,VEND 3), a consumer cancel before dispensing, and a
 * result that never came (timeout, a lost link, an approval that came too late) are not.
 */
export const CHARGED_VEND_OUTCOMES = ['success', 'reset'] as const;

/** True for a vend outcome (or a ledger vend state) the consumer pays for. */
export function isChargedVend(outcome: string): boolean {
  return outcome === 'success' || outcome === 'reset';
}

/**
 * A vend the reader is about to approve to the VMC: what the vend journal keeps of it, written
 * just before C,VEND,<amount> goes to the board (docs/operations.md, "The vend journal"). Once
 * the VMC has it, a reset before its result is a sale (MDB 4.2 7.4.7), so a restart that never
 * heard the result charges it (docs/decisions/sales-and-recovery.md).
 */
export type VendApproval =
  | { flow: 'static'; txId: string; vendSeq: number; item: number; price: number }
  | { flow: 'dynamic'; txId: string; requestId: string };
