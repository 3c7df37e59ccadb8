/**
 * Times on the console's pages in the reader's time zone (docs/console.md, "Accounts"): each
 * account may name its zone, else the console's `timeZone` applies. A page body marks each
 * instant with `timeHtml` (./html.ts) (a <time> element holding the instant as stored); `page()` (./html.ts)
 * then writes every such element in the reader's zone, to the second, with the exact instant
 * (milliseconds, and UTC) on hover. Text that is not an ISO instant (a machine's `at` is only
 * informative) is shown as it is, escaped. No import of ./html.js: it imports this.
 */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/** Whether `value` is an ISO instant (what the console and the agents write), which a page shows in a zone. */
export function isInstant(value: string): boolean {
  return ISO_INSTANT.test(value) && !Number.isNaN(Date.parse(value));
}

const formats = new Map<string, Intl.DateTimeFormat>();

function formatFor(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    });
    if (formats.size > 500) formats.clear();
    formats.set(zone, f);
  }
  return f;
}

/** `2026-12-04 20:29:56 CET` (to the second) and the exact `...56.769 CET`, for an instant in `zone`. */
export function formatInstant(ms: number, zone: string): { shown: string; exact: string } {
  const parts: Record<string, string> = {};
  for (const p of formatFor(zone).formatToParts(new Date(ms))) parts[p.type] = p.value;
  const day = `${parts.year}-${parts.month}-${parts.day}`;
  const time = `${parts.hour}:${parts.minute}:${parts.second}`;
  const milli = String(((ms % 1000) + 1000) % 1000).padStart(3, '0');
  return { shown: `${day} ${time} ${parts.timeZoneName}`, exact: `${day} ${time}.${milli} ${parts.timeZoneName}` };
}

const MARKED = /<time datetime="([^"<>]*)">[^<]*<\/time>/g;

/** Writes each instant `timeHtml` marked in `text` in `zone`, the exact instant in its title. */
export function localizeTimes(text: string, zone: string): string {
  return text.replace(MARKED, (whole, iso: string) => {
    const ms = Date.parse(iso);
    if (Number.isNaN(ms)) return whole;
    const { shown, exact } = formatInstant(ms, zone);
    const utc = new Date(ms).toISOString();
    return `<time datetime="${utc}" title="${exact} (${utc})">${shown}</time>`;
  });
}
