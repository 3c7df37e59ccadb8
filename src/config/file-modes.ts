/**
 * Modes of the files qrvend trusts (docs/decisions/hardening.md item 9). A secret (the Start SecretToken, the TLS
 * key) that every local user can read is no longer a secret: refused, exit 78 naming the file and
 * its mode. A configuration file that every local user can write lets any of them point the
 * daemon at another gateway: warned about (a site may have a reason; the daemon still starts).
 */
import { statSync } from 'node:fs';
import { QrvendError, type ErrorCode } from '../core/errors.js';

export function modeText(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

/** The permission bits of `file`, or null when it cannot be stat'ed (the reader reports that). */
function modeOf(file: string): number | null {
  try {
    return statSync(file).mode & 0o777;
  } catch {
    return null;
  }
}

/** Throws (code `code`, exit 78) when `file` is readable or writable by others. */
export function refuseExposedSecret(file: string, what: string, code: ErrorCode, configKey: string): void {
  const mode = modeOf(file);
  if (mode === null || (mode & 0o006) === 0) return;
  throw new QrvendError(
    code,
    `${what} ${file} has mode ${modeText(mode)}: ${mode & 0o004 ? 'readable' : 'writable'} by every local user`,
    {
      hint: `chmod 0640 ${file} and chown root:qrvend ${file} (or correct ${configKey})`,
      details: { file, mode: modeText(mode) },
    },
  );
}

/** A warning (one line) when the configuration file can be written by every local user, else null. */
export function configFileWarning(file: string): string | null {
  const mode = modeOf(file);
  if (mode === null || (mode & 0o002) === 0) return null;
  return `configuration file ${file} has mode ${modeText(mode)}: every local user can change it (chmod 0640 ${file})`;
}
