/**
 * The doctor's report for a terminal: one line per check, and what to do under anything not OK.
 * Summaries quote things from outside (file names, a gateway's answer): escaped for the terminal.
 */
import { escapeForTerminal as safe } from '../core/terminal-text.js';
import type { DoctorReport } from './types.js';

export function formatReport(report: DoctorReport, configFile: string | undefined): string {
  const width = Math.max(...report.results.map((r) => r.title.length));
  const lines = [`qrvend doctor (config: ${safe(configFile ?? 'defaults only')})`, ''];
  for (const r of report.results) {
    lines.push(`  ${r.status.padEnd(4)}  ${r.title.padEnd(width)}  ${safe(r.summary)}`);
    if (r.status !== 'OK' && r.action) lines.push(`  ${''.padEnd(4)}  ${''.padEnd(width)}  -> ${safe(r.action)}`);
  }
  const { OK, WARN, FAIL } = report.counts;
  lines.push('', `${OK} OK, ${WARN} WARN, ${FAIL} FAIL: ${report.ok ? 'no failures' : 'fix the FAIL lines above'}`);
  return `${lines.join('\n')}\n`;
}
