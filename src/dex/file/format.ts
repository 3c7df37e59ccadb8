/**
 * What `qrvend dex parse` prints: the check, the machine, the totals and the per-product table.
 * Every string from the file goes through escapeForTerminal: an audit file is outside input.
 */
import { ErrorCodes } from '../../core/errors.js';
import { escapeForTerminal, jsonForTerminal } from '../../core/terminal-text.js';
import type { AuditFile, Figures, Totals } from './index.js';

/** Minor units with the implied decimal point placed (EVA-DTS Nc: ID401 places, 2 by default). */
export function formatMinor(minor: number | null, decimals: number): string {
  if (minor === null) return '-';
  if (decimals === 0) return String(minor);
  const s = String(minor).padStart(decimals + 1, '0');
  return `${s.slice(0, -decimals)}.${s.slice(-decimals)}`;
}

/**
 * The whole answer as JSON. `ok` and, when the check failed, `error` (a stable code, the check
 * that failed first, the reason) come first, so a script reads every refusal the same way.
 */
export function formatAuditJson(file: AuditFile): string {
  const failed = file.check.issues.find((i) => i.severity === 'error');
  const error =
    failed === undefined
      ? {}
      : { error: { code: ErrorCodes.DEX_FILE_UNTRUSTED, check: failed.code, message: failed.message } };
  return `${jsonForTerminal({ ok: file.check.ok, ...error, ...file }, 2)}\n`;
}

export function formatAuditText(file: AuditFile): string {
  const out: string[] = [];
  const t = escapeForTerminal;
  out.push(
    file.check.ok
      ? `check: ok (G85 ${file.check.g85.join(', ') || 'none'}${g85Form(file)})`
      : `check: FAILED, figures not to be trusted: ${t(file.reason ?? '')}`,
  );
  for (const issue of file.check.issues)
    out.push(
      `  ${issue.severity === 'error' ? 'ERROR' : 'warn '} ` +
        `${issue.line === null ? '' : `line ${issue.line}: `}${t(issue.message)}`,
    );
  const a = file.audit;
  if (a === null) return `${out.join('\n')}\n`;
  const d = a.currency.decimals;
  const cur = a.currency.alpha ? ` ${t(a.currency.alpha)}` : '';
  const money = (f: Figures | undefined) =>
    f === undefined ? '-' : `${formatMinor(f.value, d)}${cur} in ${f.count ?? '-'} vends`;
  const totalsText = (totals: Totals) =>
    `${money(totals.sinceInit)} (lifetime); ${money(totals.sinceReset)} since the last reset`;
  const row = (label: string, totals: Totals | null) =>
    out.push(`${label.padEnd(14)}${totals === null ? 'not in the file' : totalsText(totals)}`);
  out.push(
    `machine: serial ${t(a.machine.serial ?? '-')}, model ${t(a.machine.model ?? '-')}` +
      `${a.machine.location ? `, at ${t(a.machine.location)}` : ''}; sender ` +
      `${t(a.sender ?? '-')}, EVA-DTS ${t(a.version ?? '-')}`,
  );
  row('paid vends', a.paid);
  row('cash', a.cash.sales);
  row('cashless #1', a.cashless1);
  row('cashless #2', a.cashless2);
  if (a.free) row('free vends', a.free);
  if (a.test) row('test vends', a.test);
  if (a.products.length > 0) {
    out.push(
      '',
      `${'selection'.padEnd(10)} ${'product'.padEnd(12)} ${'price'.padStart(9)} ` +
        `${'vends'.padStart(7)} ${'value'.padStart(11)}  by device (lifetime vends)`,
    );
    for (const p of a.products) {
      const count = p.paid?.sinceInit.count ?? sumOrNull(p.byDevice.map((x) => x.totals.sinceInit.count));
      const value = p.paid?.sinceInit.value ?? sumOrNull(p.byDevice.map((x) => x.totals.sinceInit.value));
      const devices = p.byDevice
        .map((x) => `${t(x.device)}${x.priceList ? `/${x.priceList}` : ''} ${x.totals.sinceInit.count ?? '-'}`)
        .join(', ');
      out.push(
        `${t(p.selection).padEnd(10)} ${t(p.productId ?? '-').padEnd(12)} ${formatMinor(p.price, d).padStart(9)} ` +
          `${String(count ?? '-').padStart(7)} ${formatMinor(value, d).padStart(11)}  ${devices || '-'}`,
      );
    }
  }
  if (a.events.length > 0) {
    out.push('', 'events:');
    for (const e of a.events) {
      out.push(
        e.record === 'EA1'
          ? `  ${t(e.id).padEnd(6)} on ${t(e.date ?? '-')} ${t(e.time ?? '')}` +
              `${e.durationMin === null ? '' : `, ${e.durationMin} min`}`
          : `  ${t(e.id).padEnd(6)} ${e.sinceReset ?? '-'} since reset, ` +
              `${e.sinceInit ?? '-'} lifetime${e.active ? ', ACTIVE now' : ''}`,
      );
    }
  }
  if (a.reads)
    out.push(
      `reads: ${a.reads.total ?? '-'} in all, ${a.reads.resets ?? '-'} ` +
        `resets; this read ${t(a.reads.date ?? '-')} ${t(a.reads.time ?? '')}`,
    );
  if (a.other.length > 0)
    out.push(
      `other segments kept as written: ${a.other.length} (` +
        `${[...new Set(a.other.map((o) => t(o.text.split('*')[0]!)))].join(', ')})`,
    );
  for (const w of a.warnings) out.push(`warn  ${t(w)}`);
  if (file.preamble.length > 0) out.push(`lines before DXS kept: ${file.preamble.length}`);
  return `${out.join('\n')}\n`;
}

/** Over which form of the lines G85 was computed (src/dex/file/g85.ts); nothing when no G85 was checked. */
function g85Form(file: AuditFile): string {
  if (!file.check.g85.some((r) => r === 'ok' || r === 'swapped')) return '';
  if (file.check.g85Over === 'stored-crlf') return ", over the file's own CR LF lines";
  const ends = file.check.lineEnds === 'mixed' ? 'mixed' : file.check.lineEnds.toUpperCase();
  return `, over the lines with CR LF restored: the file has ${ends} line ends`;
}

function sumOrNull(values: (number | null)[]): number | null {
  return values.length === 0 || values.some((v) => v === null) ? null : values.reduce<number>((s, v) => s + v!, 0);
}
