/**
 * What `qrvend fleet watch` says about an audit event (src/fleet/contract/audit.ts). The summary
 * rides on part 0 as free-form JSON from a machine: every figure is read defensively (a field of
 * the wrong type is left out, never trusted) and every string is escaped for the terminal.
 */
import { escapeForTerminal } from '../../core/terminal-text.js';

const obj = (v: unknown): Record<string, unknown> | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
const str = (v: unknown): string | null => (typeof v === 'string' ? escapeForTerminal(v.slice(0, 120)) : null);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) ? v : null);

/** The part after "audit <id> part 1/N" on the line of part 0; '' when there is nothing to say. */
export function auditSummaryText(summary: Record<string, unknown> | null): string {
  if (summary === null) return '';
  const out: string[] = [];
  const serial = str(obj(summary.machine)?.serial);
  if (serial !== null) out.push(`serial ${serial}`);
  const bytes = int(summary.bytes);
  const protocol = str(summary.protocol);
  if (bytes !== null) out.push(`${bytes} bytes${protocol ? ` ${protocol}` : ''}`);
  const check = obj(summary.check);
  if (check?.ok === true) out.push('check ok');
  else if (check?.ok === false) out.push(`CHECK FAILED${str(check.reason) ? ` (${str(check.reason)})` : ''}`);
  const interval = obj(summary.interval);
  const kind = str(interval?.kind);
  if (kind === 'sales') {
    const sales = obj(interval!.sales);
    const count = (k: string) => int(obj(sales?.[k])?.count);
    const figures = [
      ['paid', 'paid'],
      ['cash', 'cash'],
      ['cashless1', 'cashless #1'],
      ['cashless2', 'cashless #2'],
    ]
      .map(([k, label]) => (count(k!) === null ? null : `${label} +${count(k!)}`))
      .filter((x) => x !== null);
    out.push(`vends ${figures.join(', ') || '-'}`);
  } else if (kind === 'new-series' || kind === 'first') {
    out.push(`NEW SERIES${str(interval!.reason) ? ` (${str(interval!.reason)})` : ''}`);
  }
  const rec = obj(summary.reconciliation);
  const status = str(rec?.status);
  if (status === 'match') out.push('reconciled');
  else if (status === 'mismatch') out.push(`MISMATCH ${str(rec!.message) ?? ''}`.trim());
  return out.join(', ');
}
