/**
 * Splits an EVA-DTS audit file (EVA-DTS 6.1.1 section 2) into data segments: one per line, elements
 * separated by `*`. The file is read byte for byte as latin1 so that every offset is a byte offset:
 * the G85 check (check.ts) runs over the exact bytes the VMC sent. Line ends are CRLF by the
 * standard; a lone LF or CR is accepted too, because files copied through other tools lose the CR.
 */

export interface Segment {
  /** 1-based line number in the file, for messages a technician can follow in an editor. */
  line: number;
  /** The segment identifier (`DXS`, `VA1`, `PA7`...), or the whole line when it is not one. */
  tag: string;
  /** The elements after the tag; an empty field is ''. */
  elements: string[];
  /** The line as it was, without its line end. */
  text: string;
  /** Byte offset of the line's first byte, and of the byte after its line end. */
  start: number;
  end: number;
}

/** What a segment identifier looks like: two or three capitals, then up to two digits (ID1, CA10, DXS, G85). */
const TAG = /^[A-Z]{1,3}[0-9]{0,2}$/;

export function isSegmentTag(tag: string): boolean {
  return TAG.test(tag);
}

export function splitSegments(bytes: Uint8Array): Segment[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const segments: Segment[] = [];
  let start = 0;
  let line = 1;
  while (start < text.length) {
    let stop = start;
    while (stop < text.length && text[stop] !== '\r' && text[stop] !== '\n') stop++;
    let end = stop;
    if (text[end] === '\r') end++;
    if (text[end] === '\n') end++;
    const body = text.slice(start, stop);
    // A blank line (some writers end the file with one) carries nothing; it still counts for line numbers.
    if (body.trim() !== '') segments.push(segmentOf(body, line, start, end));
    start = end;
    line++;
  }
  return segments;
}

function segmentOf(text: string, line: number, start: number, end: number): Segment {
  const parts = text.split('*');
  return { line, tag: parts[0]!.trim(), elements: parts.slice(1).map((e) => e.trim()), text, start, end };
}

/**
 * The segment that begins `offset` characters into `seg`'s line, and what came before it: a
 * capture tool's own header written on the same line as DXS.
 */
export function splitLineAt(seg: Segment, offset: number): { skipped: Segment; rest: Segment } {
  return {
    skipped: { ...seg, tag: seg.text.slice(0, offset), elements: [], text: seg.text.slice(0, offset) },
    rest: segmentOf(seg.text.slice(offset), seg.line, seg.start + offset, seg.end),
  };
}
