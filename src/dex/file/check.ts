/**
 * Is this audit file whole and unaltered? EVA-DTS 6.1.1 section 2.4: the G85 CRC over each
 * transaction set (from the S of ST to the CR LF before G85, written most significant byte
 * first; before version 6.0 many machines wrote it the other way round, and the standard says to
 * accept both there), the SE segment count, and the DXS/DXE envelope.
 *
 * An `error` means the figures cannot be trusted (altered or cut short): the file is kept raw but
 * not used for sales or reconciliation. A `warning` is a deviation real machines commonly make
 * (docs/dex.md, "The check").
 */
import type { Envelope, TransactionSet } from './blocks.js';
import type { Segment } from './lines.js';
import { crcAsTransmitted, lineEndsOf, type G85Over, type LineEnds } from './g85.js';

export type CheckCode =
  | 'empty'
  | 'no-dxs'
  | 'dxs-after-header'
  | 'no-dxe'
  | 'no-st'
  | 'no-se'
  | 'se-count'
  | 'se-convention'
  | 'se-control'
  | 'dxe-sets'
  | 'g85-missing'
  | 'g85-mismatch'
  | 'g85-malformed'
  | 'outside-set'
  | 'several-blocks';

export interface CheckIssue {
  severity: 'error' | 'warning';
  code: CheckCode;
  /** 1-based line in the file, null for the file as a whole. */
  line: number | null;
  message: string;
}

/** How each transaction set's G85 compared: `swapped` = matched with the bytes reversed (pre-6.0 writers). */
export type G85Result = 'ok' | 'swapped' | 'missing' | 'mismatch' | 'malformed';

export interface FileCheck {
  ok: boolean;
  issues: CheckIssue[];
  g85: G85Result[];
  /** The file's line ends, and so over which form of its lines the G85 was computed (g85.ts). */
  lineEnds: LineEnds;
  g85Over: G85Over;
}

/**
 * SE counts that differ from ST-to-SE by a writer's known habit; believed only when G85 proves the set
 * intact. +1: the count runs from the DXS application header (the whole transmission up to SE).
 * -1: ST or SE left out of the count, as the standard's own configuration example does (2.4.4: SE*06
 * over seven segments).
 */
const SE_CONVENTIONS: ReadonlyMap<number, string> = new Map([
  [1, 'counted from DXS (the application header counted too), as some makers write it'],
  [-1, "ST or SE not counted, as in the standard's own configuration example (2.4.4)"],
]);

type Report = (code: CheckCode, line: number | null, message: string) => void;

const hex4 = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
const FORMS: Record<G85Over, string> = {
  'stored-crlf': "over the file's own CR LF lines",
  'crlf-restored': 'over the lines with CR LF restored',
};

export function checkFile(bytes: Uint8Array, env: Envelope): FileCheck {
  const issues: CheckIssue[] = [];
  const g85: G85Result[] = [];
  const error: Report = (code, line, message) => issues.push({ severity: 'error', code, line, message });
  const warn: Report = (code, line, message) => issues.push({ severity: 'warning', code, line, message });
  const lineEnds = lineEndsOf(bytes);
  const g85Over: G85Over = lineEnds === 'crlf' || lineEnds === 'none' ? 'stored-crlf' : 'crlf-restored';

  if (bytes.length === 0) error('empty', null, 'the file is empty: the VMC sent no audit data');
  else if (env.blocks.length === 0)
    error('no-dxs', null, 'no DXS line: this is not an EVA-DTS audit file (or its start was lost)');
  for (const skipped of env.skippedBeforeDxs) {
    const shown = skipped.text.length > 60 ? `${skipped.text.slice(0, 60)}...` : skipped.text;
    const message =
      `"${shown}" (${skipped.text.length} characters) before DXS on line ${skipped.line} was skipped: ` +
      "a capture tool's header, kept with the lines before DXS";
    warn('dxs-after-header', skipped.line, message);
  }
  if (env.blocks.length > 1)
    warn(
      'several-blocks',
      env.blocks[1]!.dxs.line,
      `${env.blocks.length} DXS blocks: the one with a VA1 line is ` +
        `read as the machine's audit, the others are kept as they are`,
    );

  for (const block of env.blocks) {
    if (block.dxe === null)
      error('no-dxe', block.dxs.line, `the DXS block of line ${block.dxs.line} has no DXE: the file was cut short`);
    if (block.sets.length === 0)
      error('no-st', block.dxs.line, `the DXS block of line ${block.dxs.line} has no ST transaction set`);
    for (const seg of block.loose)
      warn(
        'outside-set',
        seg.line,
        `line ${seg.line} (${seg.tag}) is outside any ST ... SE transaction set; kept, not covered by G85`,
      );
    if (block.dxe !== null) {
      const declared = block.dxe.elements[1];
      if (declared !== undefined && declared !== '' && Number(declared) !== block.sets.length) {
        warn('dxe-sets', block.dxe.line, `DXE says ${declared} transaction set(s), the block has ${block.sets.length}`);
      }
    }
    // Before 6.0 the version was V1/1 (or VEND2); only V0/6 writers are held to the documented byte order.
    const modern = block.version === 'V0/6';
    for (const set of block.sets) {
      // A set cut short has already said so; a missing G85 there is not news.
      const how = { modern, over: g85Over, lineEnds };
      const result = set.se === null && set.g85 === null ? 'missing' : checkG85(bytes, set, how, error, warn);
      g85.push(result);
      if (set.se === null) {
        error('no-se', set.st.line, `the transaction set of line ${set.st.line} has no SE: the file was cut short`);
      } else checkSe(set, set.se, result === 'ok' || result === 'swapped', error, warn);
    }
  }
  return { ok: !issues.some((i) => i.severity === 'error'), issues, g85, lineEnds, g85Over };
}

/** SE01 against the segments counted; `proven` = the set's G85 matched, so a known convention is only a warning. */
function checkSe(set: TransactionSet, se: Segment, proven: boolean, error: Report, warn: Report): void {
  const counted = set.body.length + (set.g85 ? 1 : 0) + 2;
  const declared = se.elements[0] ?? '';
  const said = `SE says ${declared || '(nothing)'} segments, the set from line ${set.st.line} has ${counted}`;
  if (!/^\d{1,6}$/.test(declared)) {
    error('se-count', se.line, `${said}: lines were lost or added`);
  } else if (Number(declared) !== counted) {
    const convention = SE_CONVENTIONS.get(Number(declared) - counted);
    if (convention === undefined) error('se-count', se.line, `${said}: lines were lost or added`);
    else if (proven) warn('se-convention', se.line, `${said}: ${convention}; G85 proves the set intact`);
    else {
      const unproven = 'but with no matching G85 nothing proves that no line was lost or added';
      error('se-count', se.line, `${said}: it would fit "${convention}", ${unproven}`);
    }
  }
  const control = se.elements[1] ?? '';
  const stControl = set.st.elements[1] ?? '';
  if (control !== stControl) {
    warn('se-control', se.line, `SE control number ${control || '(none)'} differs from ST's ${stControl || '(none)'}`);
  }
}

function checkG85(
  bytes: Uint8Array,
  set: TransactionSet,
  how: { modern: boolean; over: G85Over; lineEnds: LineEnds },
  error: Report,
  warn: Report,
): G85Result {
  if (set.g85 === null) {
    // Mandatory from the VMD since 6.0, absent from some older machines: not proof of damage, but nothing is verified.
    warn(
      'g85-missing',
      set.st.line,
      `the transaction set of line ${set.st.line} has no G85: its integrity cannot be checked`,
    );
    return 'missing';
  }
  const given = (set.g85.elements[0] ?? '').toUpperCase();
  if (!/^[0-9A-F]{4}$/.test(given)) {
    error('g85-malformed', set.g85.line, `G85 "${given}" is not four hex digits`);
    return 'malformed';
  }
  const crc = crcAsTransmitted(bytes, set.st.start, set.g85.start);
  if (given === hex4(crc)) return 'ok';
  const swapped = ((crc & 0xff) << 8) | (crc >>> 8);
  if (!how.modern && given === hex4(swapped)) return 'swapped';
  const ends = how.lineEnds === 'mixed' ? 'mixed' : how.lineEnds.toUpperCase();
  const form = `${FORMS[how.over]}${how.over === 'crlf-restored' ? ` (the file has ${ends} line ends)` : ''}`;
  const old = how.modern ? '' : ` (or ${hex4(swapped)} in the old byte order)`;
  const computed = `the data from line ${set.st.line} computes ${hex4(crc)}${old}, computed ${form}`;
  error('g85-mismatch', set.g85.line, `G85 says ${given}, ${computed}: the file was altered or damaged on the way`);
  return 'mismatch';
}
