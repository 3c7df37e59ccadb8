/**
 * The sale checker: compares what the VMC simulator actually dispensed with what the gateway
 * simulator recorded, and says whether every sale was charged exactly once (docs/decisions/reliability-bars.md:
 * nothing lost, nothing doubled). Used by the demo, the chaos run and the end-to-end tests.
 *
 * The VMC side knows which vends were dispensed and at what approved amount; the gateway side
 * knows what was charged: accepted Settlements (Static QR) and paid QRs not voided (Dynamic QR).
 * Each flow is balanced on its own, in minor units, and the number of sales must match too, so a
 * lost sale in one flow can never be hidden by an over-charge in the other.
 */
import type { LedgerView, TxRecord } from './gateway/index.js';
import { owedVend, type SimSessionRecord } from './vmc/index.js';

type PerFlow = { static: number; dynamic: number };

export interface SaleCheck {
  vmcSessions: number;
  vendsDispensed: number;
  /** Minor units. */
  dispensedMinor: PerFlow;
  chargedMinor: PerFlow;
  /**
   * Sales: Static QR sessions that dispensed something / Settlements accepted;
   * dispensed Dynamic QR vends / paid QRs not voided.
   */
  dispensedSales: PerFlow;
  chargedSales: PerFlow;
  /** Dispensed but never charged (minor units, summed over the flows): must be 0. */
  lostMinor: number;
  /** Charged without a dispense (minor units, summed over the flows): must be 0. */
  chargedNotVendedMinor: number;
  /** Transactions with more than one accepted Settlement/Cancel/Void, or a conflicting repeat: must be empty. */
  chargedTwice: string[];
  /** Approved authorizations with no accepted closing yet: must be empty. */
  unresolved: string[];
  ok: boolean;
}

export interface CheckOptions {
  decimalPlaces?: number;
  /**
   * mdb.virtualCredit, when set: the reader's virtual-credit sessions are opened with this credit
   * and every selection in them is paid by Dynamic QR, so their vends count as Dynamic QR sales.
   */
  virtualCredit?: number | null;
}

function closingsAccepted(tx: TxRecord): number {
  return tx.accepted.Settlement + tx.accepted.Cancel + tx.accepted.Void;
}

export function checkSales(
  vmc: readonly SimSessionRecord[],
  gateway: LedgerView,
  options: CheckOptions | number = {},
): SaleCheck {
  const { decimalPlaces = 2, virtualCredit = null } =
    typeof options === 'number' ? { decimalPlaces: options } : options;
  const minor = (amount: number) => Math.round(amount * 10 ** decimalPlaces);
  const dispensed: PerFlow = { static: 0, dynamic: 0 };
  const dispensedSales: PerFlow = { static: 0, dynamic: 0 };
  let vendsDispensed = 0;
  for (const session of vmc) {
    const paidByQrEachVend =
      session.kind === 'always-idle' ||
      (virtualCredit !== null && session.funds !== null && minor(session.funds) === minor(virtualCredit));
    let sessionMinor = 0;
    for (const vend of session.vends) {
      if (!owedVend(vend)) continue;
      vendsDispensed += 1;
      sessionMinor += minor(vend.approved ?? 0);
      if (paidByQrEachVend) dispensedSales.dynamic += 1;
    }
    if (paidByQrEachVend) dispensed.dynamic += sessionMinor;
    else {
      dispensed.static += sessionMinor;
      if (sessionMinor > 0) dispensedSales.static += 1;
    }
  }
  const charged: PerFlow = { static: 0, dynamic: 0 };
  const chargedSales: PerFlow = { static: 0, dynamic: 0 };
  const chargedTwice: string[] = [];
  const unresolved: string[] = [];
  for (const tx of Object.values(gateway.transactions)) {
    if (closingsAccepted(tx) > 1 || tx.conflicts.length > 0) chargedTwice.push(tx.transactionId);
    if (tx.flow === 'static') {
      if (tx.authorization?.verdict === 'Approved' && closingsAccepted(tx) === 0) unresolved.push(tx.transactionId);
      if (tx.settlement?.verdict === 'Approved') {
        charged.static += minor(tx.settlement.amount);
        chargedSales.static += 1;
      }
    } else if (tx.state === 'paid') {
      // Paid and not voided: the sale stands (vend success closes it with nothing to send).
      charged.dynamic += minor(tx.qr?.amount ?? 0);
      chargedSales.dynamic += 1;
    }
  }
  const lostMinor = Math.max(0, dispensed.static - charged.static) + Math.max(0, dispensed.dynamic - charged.dynamic);
  const chargedNotVendedMinor =
    Math.max(0, charged.static - dispensed.static) + Math.max(0, charged.dynamic - dispensed.dynamic);
  const salesMatch = dispensedSales.static === chargedSales.static && dispensedSales.dynamic === chargedSales.dynamic;
  return {
    vmcSessions: vmc.length,
    vendsDispensed,
    dispensedMinor: dispensed,
    chargedMinor: charged,
    dispensedSales,
    chargedSales,
    lostMinor,
    chargedNotVendedMinor,
    chargedTwice,
    unresolved,
    ok:
      lostMinor === 0 &&
      chargedNotVendedMinor === 0 &&
      salesMatch &&
      chargedTwice.length === 0 &&
      unresolved.length === 0,
  };
}

export function formatCheck(check: SaleCheck, decimalPlaces = 2): string {
  const major = (m: number) => (m / 10 ** decimalPlaces).toFixed(decimalPlaces);
  return [
    `VMC sessions: ${check.vmcSessions}, vends dispensed: ${check.vendsDispensed}`,
    `dispensed: static ${major(check.dispensedMinor.static)} in ${check.dispensedSales.static} ` +
      `sessions + dynamic ${major(check.dispensedMinor.dynamic)} in ${check.dispensedSales.dynamic} vends`,
    `charged:   static ${major(check.chargedMinor.static)} in ${check.chargedSales.static} settlements + ` +
      `dynamic ${major(check.chargedMinor.dynamic)} in ${check.chargedSales.dynamic} payments`,
    `sales lost: ${major(check.lostMinor)}  charged twice: ${check.chargedTwice.length}  unresolved: ` +
      `${check.unresolved.length}  charged but not vended: ${major(check.chargedNotVendedMinor)}`,
  ].join('\n');
}
