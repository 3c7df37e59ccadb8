/**
 * The console's request parameters as read from a URL (docs/console.md, "Pages"). What a browser
 * or anyone else sends is checked here; a value that is present but not what the parameter takes
 * is refused with CONSOLE_BAD_REQUEST naming the parameter, which the server answers with 400 and
 * does not log (a bad request is the sender's, not the console's, so it must not flood the log).
 */
import { ErrorCodes, QrvendError, isQrvendError } from '../../core/errors.js';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

export function refused(parameter: string, why: string): QrvendError {
  return new QrvendError(ErrorCodes.CONSOLE_BAD_REQUEST, `${parameter}: ${why}`, { details: { parameter } });
}

/** A calendar day YYYY-MM-DD from the parameter `name`; null when absent or empty. */
export function dayParam(params: URLSearchParams, name: string): string | null {
  const value = params.get(name);
  if (value === null || value === '') return null;
  const m = DAY.exec(value);
  const [year, month, day] = m === null ? [0, 0, 0] : [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC rolls 2026-13-01 over into 2027-01-01: a real day reads back as itself.
  const real =
    m !== null &&
    year >= 1 &&
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day;
  if (!real) throw refused(name, `${JSON.stringify(value.slice(0, 40))} is not a day of the calendar (YYYY-MM-DD)`);
  return value;
}

/** The machine id of a `/machines/ID` path (percent-encoded as the pages link it), at most 128 characters. */
export function machineIdParam(encoded: string): string {
  try {
    return decodeURIComponent(encoded).slice(0, 128);
  } catch {
    throw refused('machine id (the path after /machines/)', 'not valid percent-encoding (a % must start %XX)');
  }
}

/**
 * The text of a 400 for a URL the router could not decode (`message` is the router's): under
 * /machines/ it names the machine id, as machineIdParam() does.
 */
export function badUrlText(url: string, message: string): string {
  const path = url.split('?')[0] ?? '';
  if (path.startsWith('/machines/')) {
    try {
      machineIdParam(path.slice('/machines/'.length));
    } catch (err) {
      const refusal = badRequestText(err);
      if (refusal !== null) return `${refusal.trimEnd()} (${message})\n`;
    }
  }
  return `${message}\n`;
}

/** The text of a 400 answer when the failure is a refused parameter, else null (a failure of the console's own). */
export function badRequestText(err: unknown): string | null {
  return isQrvendError(err, ErrorCodes.CONSOLE_BAD_REQUEST) ? `refused: ${err.message}\n` : null;
}
