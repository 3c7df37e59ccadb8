/**
 * Does the VMC's own count of cashless vends through qrvend agree with qrvend's ledger over the
 * same interval (docs/decisions/machine-audit.md)? qrvend is cashless device #1 or #2 (mdb.device), so the VMC
 * counts its vends in DA2 or DB2. Counts decide (dex.reconcileToleranceVends): they are exact on
 * both sides, while values may be kept with different decimal places; both values are reported.
 * A vend that completes while the VMC is being read can land on either side of the boundary,
 * which is what the tolerance is for.
 */
import type { Interval } from './counters.js';

export type CashlessDevice = 'cashless1' | 'cashless2';

export interface LedgerCashless {
  count: number;
  /** Minor units of machine.decimalPlaces. */
  valueMinor: number;
  decimalPlaces: number;
}

export type Reconciliation =
  | { status: 'skipped'; reason: string }
  | {
      status: 'match' | 'mismatch';
      /** DA2 or DB2. */
      record: 'DA2' | 'DB2';
      vmc: { count: number; valueMinor: number | null; decimalPlaces: number };
      ledger: LedgerCashless;
      /** VMC count minus ledger count. */
      difference: number;
      tolerance: number;
      message: string;
    };

export function reconcile(input: {
  device: CashlessDevice;
  interval: Interval;
  ledger: LedgerCashless;
  /** ID401 of the audit file. */
  vmcDecimalPlaces: number;
  tolerance: number;
}): Reconciliation {
  const { device, interval, ledger, tolerance } = input;
  const record = device === 'cashless1' ? 'DA2' : 'DB2';
  if (interval.kind !== 'sales') return { status: 'skipped', reason: `no interval to compare: ${interval.reason}` };
  const vmc = interval.sales[device];
  if (vmc.count === null)
    return {
      status: 'skipped',
      reason: `the audit has no ${record} vend count (qrvend is ${device}, mdb.device): nothing to compare`,
    };
  const difference = vmc.count - ledger.count;
  const status = Math.abs(difference) > tolerance ? 'mismatch' : 'match';
  const figures =
    `the VMC counted ${vmc.count} vends (${record}` +
    `${vmc.value === null ? '' : `, value ${vmc.value} at ${input.vmcDecimalPlaces} decimals`}), ` +
    `qrvend's ledger ${ledger.count} (value ${ledger.valueMinor} at ${ledger.decimalPlaces} decimals)`;
  return {
    status,
    record,
    vmc: { count: vmc.count, valueMinor: vmc.value, decimalPlaces: input.vmcDecimalPlaces },
    ledger,
    difference,
    tolerance,
    message:
      status === 'match'
        ? `${figures}: within ${tolerance}`
        : `${figures} over the same interval: ${Math.abs(difference)} apart, more than dex.reconcileToleranceVends ` +
          `(${tolerance}); check mdb.device and the VMC's cashless settings, then the ledger (\`qrvend ledger\`)`,
  };
}
