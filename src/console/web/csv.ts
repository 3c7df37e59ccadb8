/**
 * CSV as RFC 4180 (quoted where needed, CRLF). A cell a spreadsheet would run as a formula
 * (starting with = + - @, a tab or a carriage return) gets a leading apostrophe, so a
 * machine-sent text cannot run anything on an operator's desktop (OWASP "CSV injection").
 */

export function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csv(header: string[], rows: unknown[][]): string {
  return [header, ...rows].map((row) => row.map(csvCell).join(',')).join('\r\n') + '\r\n';
}
