/**
 * What the payment worker does with one audit read (docs/decisions/machine-audit.md): check and parse the file,
 * compute the interval's sales from the last trusted audit, reconcile qrvend's cashless figure
 * with the ledger, store it all (raw included, whatever the check said) and queue its fleet events
 * in the same write. Returns what the alarms and the `dex.read` reply need.
 */
import { MAX_PAYLOAD_BYTES } from '../../fleet/contract/messages.js';
import { AUDIT_PART_BYTES } from '../../fleet/contract/audit.js';
import type { AuditTrigger, DexAuditLog } from '../../ledger/index.js';
import { examineAuditFile, type AuditFile } from '../file/index.js';
import { intervalSales, snapshotOf, type CounterSnapshot, type Interval } from './counters.js';
import { reconcile, type CashlessDevice, type Reconciliation } from './reconcile.js';

export interface AuditReadInput {
  trigger: AuditTrigger;
  /** Wall clock at the end of the read: the interval boundary on both sides. */
  atMs: number;
  protocol: string;
  durationMs: number;
  bytes: Buffer;
}

export interface AuditOutcome {
  auditId: string;
  checkOk: boolean;
  reason: string | null;
  series: number;
  interval: Interval | { kind: 'unusable'; reason: string };
  reconciliation: Reconciliation;
  summary: Record<string, unknown>;
}

export interface ProcessDeps {
  audits: DexAuditLog;
  /** mdb.device: which of DA2/DB2 counts qrvend's vends. */
  device: CashlessDevice;
  /** machine.decimalPlaces, for the ledger's side when it has no vend in the interval. */
  decimalPlaces: number;
  tolerance: number;
}

/** Room for the summary on part 0 beside a full raw part (base64) and the event's other fields. */
export const SUMMARY_MAX_BYTES = MAX_PAYLOAD_BYTES - Math.ceil(AUDIT_PART_BYTES / 3) * 4 - 2048;

export function processAuditRead(input: AuditReadInput, deps: ProcessDeps): AuditOutcome {
  const file = examineAuditFile(input.bytes);
  const prev = previous(deps.audits);
  const usable = file.check.ok && file.audit !== null;
  let interval: AuditOutcome['interval'];
  let counters: CounterSnapshot | null = null;
  let series: number;
  if (usable) {
    counters = snapshotOf(file.audit!);
    interval = intervalSales(prev === null ? null : { snapshot: prev.snapshot, atMs: prev.readAtMs }, {
      snapshot: counters,
      atMs: input.atMs,
    });
    series = interval.kind === 'sales' ? prev!.series : deps.audits.lastSeries() + 1;
  } else {
    // Kept, not counted: the next trusted audit is compared with the last trusted one.
    interval = { kind: 'unusable', reason: file.reason ?? 'the file could not be read as an audit' };
    series = prev?.series ?? deps.audits.lastSeries();
  }
  let reconciliation: Reconciliation;
  if (interval.kind === 'unusable') {
    reconciliation = { status: 'skipped', reason: `no interval to compare: ${interval.reason}` };
  } else {
    const ledger =
      prev === null || interval.kind !== 'sales'
        ? { count: 0, valueMinor: 0, decimalPlaces: null }
        : deps.audits.cashlessSales(prev.readAtMs, input.atMs);
    reconciliation = reconcile({
      device: deps.device,
      interval,
      ledger: {
        count: ledger.count,
        valueMinor: ledger.valueMinor,
        decimalPlaces: ledger.decimalPlaces ?? deps.decimalPlaces,
      },
      vmcDecimalPlaces: file.audit!.currency.decimals,
      tolerance: deps.tolerance,
    });
  }
  const summary = summarise(input, file, series, interval, reconciliation);
  const row = deps.audits.record(
    {
      readAtMs: input.atMs,
      trigger: input.trigger,
      protocol: input.protocol,
      durationMs: Math.round(input.durationMs),
      raw: input.bytes,
      checkOk: usable,
      reason: usable ? null : (file.reason ?? 'the file could not be read as an audit'),
      series,
      counters: counters === null ? null : JSON.stringify(counters),
      summary: JSON.stringify(summary),
    },
    summary,
  );
  return { auditId: row.auditId, checkOk: usable, reason: row.reason, series, interval, reconciliation, summary };
}

function previous(audits: DexAuditLog): { snapshot: CounterSnapshot; readAtMs: number; series: number } | null {
  const last = audits.lastCounted();
  if (last === null) return null;
  try {
    return { snapshot: JSON.parse(last.counters) as CounterSnapshot, readAtMs: last.readAtMs, series: last.series };
  } catch {
    // A damaged row costs one interval: the next one starts a series.
    return null;
  }
}

/** What the operator sees of one read (part 0 of its events, the ledger row, the command's reply). */
function summarise(
  input: AuditReadInput,
  file: AuditFile,
  series: number,
  interval: AuditOutcome['interval'],
  reconciliation: Reconciliation,
): Record<string, unknown> {
  const a = file.audit;
  const summary: Record<string, unknown> = {
    trigger: input.trigger,
    protocol: input.protocol,
    durationMs: Math.round(input.durationMs),
    bytes: input.bytes.length,
    check: { ok: file.check.ok, reason: file.reason, g85: file.check.g85, issues: file.check.issues.slice(0, 20) },
    machine:
      a === null ? null : { serial: cap(a.machine.serial), model: cap(a.machine.model), asset: cap(a.machine.asset) },
    version: a?.version ?? null,
    currency: a?.currency ?? null,
    totals:
      a === null
        ? null
        : {
            paid: a.paid,
            cash: a.cash.sales,
            cashless1: a.cashless1,
            cashless2: a.cashless2,
            free: a.free,
            test: a.test,
          },
    series,
    interval,
    reconciliation,
    products:
      a?.products.map((p) => ({
        selection: p.selection,
        productId: p.productId,
        price: p.price,
        vends: p.paid?.sinceInit.count ?? null,
      })) ?? [],
    events: a?.events ?? [],
  };
  if (Buffer.byteLength(JSON.stringify(summary)) > SUMMARY_MAX_BYTES) {
    summary.products = [];
    summary.events = [];
    summary.omitted = 'products and events: too many for one message; they are in the raw file';
  }
  if (Buffer.byteLength(JSON.stringify(summary)) > SUMMARY_MAX_BYTES) {
    // Only a hostile or broken file gets here (fields thousands of characters long): the raw file says the rest.
    return {
      trigger: input.trigger,
      protocol: input.protocol,
      durationMs: summary.durationMs,
      bytes: input.bytes.length,
      check: { ok: file.check.ok },
      series,
      omitted: 'everything but the check: the parsed figures are too large for one message; see the raw file',
    };
  }
  return summary;
}

const cap = (s: string | null) => (s === null ? null : s.slice(0, 64));
