/**
 * The second handshake's response block read by its fields (EVA-DTS 6.1.1 section 4.5.3): a
 * response code (4.5.7), the sender's ten-character communication ID (4.5.4) and the revision and
 * level (4.5.6). Section 4.5.3 puts the code first; the worked example of section 4.7 puts it after
 * the ID, and VMCs are written against both. Which order a block uses is told by the fields' own
 * shapes: a code is one of the seven defined, an ID is three capitals and seven digits (6.0 on) or
 * ten digits (a UCC number). A block whose two readings both fit and disagree is `ambiguous`
 * (only all-digit IDs can do that): the caller goes on and reads silence after it as the refusal.
 */

export const RESPONSE_MEANINGS: Readonly<Record<string, string>> = {
  '00': 'OK',
  '01': 'unrecognised communication ID',
  '02': 'unsupported revision and level',
  '03': 'operation conflict, try again',
  '04': 'no data to transfer',
  '05': 'undefined error',
  '90': 'manufacturer specific state',
};

export interface ResponseReading {
  code: string;
  commId: string;
  order: 'code-first' | 'id-first';
}

export type UcsResponse =
  | { kind: 'read'; reading: ResponseReading; revision: string | null }
  /** Both orders fit the field shapes and give different codes. */
  | { kind: 'ambiguous'; readings: [ResponseReading, ResponseReading]; revision: string | null }
  /** No reading fits: the text as received (for the message), at most 40 characters. */
  | { kind: 'unreadable'; text: string };

const STRICT_ID = /^(?:[A-Z]{3}\d{7}|\d{10})$/;
/** Older devices: "ten alphanumeric characters" is all 4.5.4 promises. */
const LOOSE_ID = /^[0-9A-Za-z]{10}$/;
const REVISION_AT_END = /R\d\dL\d\d$/;

export function readResponseBlock(text: string): UcsResponse {
  const revision = REVISION_AT_END.exec(text)?.[0] ?? null;
  const rest = revision === null ? text : text.slice(0, -revision.length);
  const codeFirst: ResponseReading = { code: rest.slice(0, 2), commId: rest.slice(2), order: 'code-first' };
  const idFirst: ResponseReading = { code: rest.slice(-2), commId: rest.slice(0, -2), order: 'id-first' };
  for (const idShape of [STRICT_ID, LOOSE_ID]) {
    const fits = [codeFirst, idFirst].filter((r) => Object.hasOwn(RESPONSE_MEANINGS, r.code) && idShape.test(r.commId));
    if (fits.length === 1 || (fits.length === 2 && fits[0]!.code === fits[1]!.code)) {
      return { kind: 'read', reading: fits[0]!, revision };
    }
    if (fits.length === 2) return { kind: 'ambiguous', readings: [fits[0]!, fits[1]!], revision };
  }
  // An undefined code (not one of the seven) is still a code: read it where a well-formed ID leaves it.
  for (const r of [codeFirst, idFirst]) {
    if (/^\d\d$/.test(r.code) && STRICT_ID.test(r.commId)) return { kind: 'read', reading: r, revision };
  }
  return { kind: 'unreadable', text: printable(text.slice(0, 40)) };
}

/** What the VMC sent, safe for a log line and a terminal: anything but printable ASCII as \xHH. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** "response code "04" (no data to transfer)". */
export function describeCode(code: string): string {
  const meaning = RESPONSE_MEANINGS[code];
  return `response code ${JSON.stringify(code)}${meaning ? ` (${meaning})` : ''}`;
}
