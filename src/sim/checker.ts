/**
 * The sale checker: compares what the VMC simulator actually dispensed with what the gateway
 * simulator recorded, and says whether every sale was charged exactly once (design section 8:
 * nothing lost, nothing doubled). Used by the demo, the chaos run and the end-to-end tests.
 *
 * The VMC side knows which vends were dispensed and at what approved amount; the gateway side
 * knows what was charged: accepted Settlements (static QR) and paid QRs not voided (dynamic QR).
 * Amounts are compared in minor units.
 */
import type { LedgerView, TxRecord } from './gateway/index.js';
import type { SimSessionRecord } from './vmc/index.js';

export interface SaleCheck {
  vmcSessions: number;
  vendsDispensed: number;
  /** Minor units. */
  dispensedMinor: { static: number; dynamic: number };
  chargedMinor: { static: number; dynamic: number };
  /** Dispensed but never charged (minor units): must be 0. */
  lostMinor: number;
  /** Charged without a dispense (minor units): must be 0. */
  chargedNotVendedMinor: number;
  /** Transactions with more than one accepted Settlement/Cancel/Void, or a conflicting repeat: must be empty. */
  chargedTwice: string[];
  /** Approved authorizations (or paid QRs about to be voided) with no accepted closing yet: must be empty. */
  unresolved: string[];
  ok: boolean;
}

function closingsAccepted(tx: TxRecord): number {
  return tx.accepted.Settlement + tx.accepted.Cancel + tx.accepted.Void;
}

export function checkSales(vmc: readonly SimSessionRecord[], gateway: LedgerView, decimalPlaces = 2): SaleCheck {
  const minor = (amount: number) => Math.round(amount * 10 ** decimalPlaces);
  const dispensed = { static: 0, dynamic: 0 };
  let vendsDispensed = 0;
  for (const session of vmc) {
    for (const vend of session.vends) {
      if (vend.outcome !== 'success') continue;
      vendsDispensed += 1;
      // A vend in a funded session may still be paid by Dynamic QR (virtual credit mode); the
      // checker only needs the total, so it is attributed by the kind of session here.
      dispensed[session.kind === 'funded' ? 'static' : 'dynamic'] += minor(vend.approved ?? 0);
    }
  }
  const charged = { static: 0, dynamic: 0 };
  const chargedTwice: string[] = [];
  const unresolved: string[] = [];
  for (const tx of Object.values(gateway.transactions)) {
    if (closingsAccepted(tx) > 1 || tx.conflicts.length > 0) chargedTwice.push(tx.transactionId);
    if (tx.flow === 'static') {
      if (tx.authorization?.verdict === 'Approved' && closingsAccepted(tx) === 0) unresolved.push(tx.transactionId);
      if (tx.settlement?.verdict === 'Approved') charged.static += minor(tx.settlement.amount);
    } else if (tx.state === 'paid') {
      // Paid and not voided: the sale stands (vend success closes it with nothing to send).
      charged.dynamic += minor(tx.qr?.amount ?? 0);
    }
  }
  const dispensedTotal = dispensed.static + dispensed.dynamic;
  const chargedTotal = charged.static + charged.dynamic;
  const lostMinor = Math.max(0, dispensedTotal - chargedTotal);
  const chargedNotVendedMinor = Math.max(0, chargedTotal - dispensedTotal);
  return {
    vmcSessions: vmc.length,
    vendsDispensed,
    dispensedMinor: dispensed,
    chargedMinor: charged,
    lostMinor,
    chargedNotVendedMinor,
    chargedTwice,
    unresolved,
    ok: lostMinor === 0 && chargedNotVendedMinor === 0 && chargedTwice.length === 0 && unresolved.length === 0,
  };
}

export function formatCheck(check: SaleCheck, decimalPlaces = 2): string {
  const major = (m: number) => (m / 10 ** decimalPlaces).toFixed(decimalPlaces);
  return [
    `VMC sessions: ${check.vmcSessions}, vends dispensed: ${check.vendsDispensed}`,
    `dispensed: static ${major(check.dispensedMinor.static)} + dynamic ${major(check.dispensedMinor.dynamic)}`,
    `charged:   static ${major(check.chargedMinor.static)} + dynamic ${major(check.chargedMinor.dynamic)}`,
    `sales lost: ${major(check.lostMinor)}  charged twice: ${check.chargedTwice.length}  unresolved: ${check.unresolved.length}  charged but not vended: ${major(check.chargedNotVendedMinor)}`,
  ].join('\n');
}
