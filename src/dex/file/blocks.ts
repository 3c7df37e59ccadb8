/**
 * The envelope of an audit file (EVA-DTS 6.1.1 section 2.4): DXS ... DXE around one or more
 * ST ... SE transaction sets, each closed by its G85 integrity check. Real files carry more than the
 * standard allows (vendor header lines before DXS, a capture tool's header on the DXS line itself,
 * several DXS blocks when a reader appends another device's audit): everything is kept, in the place
 * it was found (docs/dex.md, "The audit file").
 */
import { isSegmentTag, splitLineAt, type Segment } from './lines.js';

export interface TransactionSet {
  st: Segment;
  /** null when the file ends (or the next ST begins) before the SE. */
  se: Segment | null;
  g85: Segment | null;
  /** The data segments between ST and SE, without the G85. */
  body: Segment[];
}

export interface Block {
  dxs: Segment;
  /** null when the file ends before the DXE. */
  dxe: Segment | null;
  /** DXS03: V0/6 from EVA-DTS 6.0 on, V1/1 (or VEND2) before. */
  version: string | null;
  /** DXS01: the sender's communication id (manufacturer code and serial). */
  sender: string | null;
  sets: TransactionSet[];
  /** Data segments inside the block but outside any ST ... SE. */
  loose: Segment[];
}

export interface Envelope {
  /** Lines before the first DXS (vendor headers, a reader's own banner). */
  preamble: Segment[];
  blocks: Block[];
  /** Lines between or after blocks. */
  outside: Segment[];
  /** Text before `DXS` on the DXS line itself (a capture tool's header); also kept in `preamble` or `outside`. */
  skippedBeforeDxs: Segment[];
}

/** Where `DXS*` begins inside a line that is not itself a DXS segment, or -1. */
function dxsInside(seg: Segment, inBlock: boolean): number {
  // Inside a block a data segment may carry the letters in a field: there only a line that is no segment is searched.
  if (seg.tag === 'DXS' || (inBlock && isSegmentTag(seg.tag))) return -1;
  return seg.text.indexOf('DXS*');
}

export function readEnvelope(segments: readonly Segment[]): Envelope {
  const env: Envelope = { preamble: [], blocks: [], outside: [], skippedBeforeDxs: [] };
  let block: Block | null = null;
  let set: TransactionSet | null = null;
  for (const found of segments) {
    let seg = found;
    const at = dxsInside(found, block !== null);
    if (at > 0) {
      const { skipped, rest } = splitLineAt(found, at);
      (env.blocks.length === 0 ? env.preamble : env.outside).push(skipped);
      env.skippedBeforeDxs.push(skipped);
      seg = rest;
    }
    if (seg.tag === 'DXS') {
      block = {
        dxs: seg,
        dxe: null,
        version: seg.elements[2] || null,
        sender: seg.elements[0] || null,
        sets: [],
        loose: [],
      };
      set = null;
      env.blocks.push(block);
      continue;
    }
    if (block === null) {
      (env.blocks.length === 0 ? env.preamble : env.outside).push(seg);
      continue;
    }
    if (seg.tag === 'DXE') {
      block.dxe = seg;
      block = null;
      set = null;
      continue;
    }
    if (seg.tag === 'ST') {
      set = { st: seg, se: null, g85: null, body: [] };
      block.sets.push(set);
      continue;
    }
    if (set === null) {
      block.loose.push(seg);
      continue;
    }
    if (seg.tag === 'SE') {
      set.se = seg;
      set = null;
    } else if (seg.tag === 'G85') {
      set.g85 = seg;
    } else {
      set.body.push(seg);
    }
  }
  return env;
}
