/**
 * Time zones of the console (docs/console.md, "Accounts"): the pages show times in the reader's
 * zone, an account's own or the console's `timeZone`, which defaults to the zone of the host.
 */

/** Whether `zone` is an IANA time zone this Node knows (Europe/Berlin, UTC, ...). */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The zone of the machine the console runs on (UTC when Node cannot tell). */
export function hostTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Every zone a reader may choose, for the accounts form. */
export function knownTimeZones(): string[] {
  return ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
}
