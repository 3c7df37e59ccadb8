/**
 * Reads the data segments of one DXS block into a ParsedAudit (audit-types.ts). Element numbers in
 * the comments are the data dictionary's (EVA-DTS 6.1.1 section 2.5): VA101 = elements[0] of VA1.
 * A segment seen a second time, or one not modelled, goes to `other` as it was written: nothing the
 * machine sent is dropped.
 */
import type { Segment } from './lines.js';
import type { AuditEventRecord, Figures, ParsedAudit, Product, Totals } from './audit-types.js';

/** Up to 15 digits: beyond that a double loses whole units. */
const NUMBER = /^\d{1,15}$/;

export function parseSegments(
  segments: readonly Segment[],
  header: { sender: string | null; version: string | null },
): ParsedAudit {
  const reader = new AuditReader(header);
  for (const seg of segments) reader.read(seg);
  return reader.audit;
}

function emptyAudit(header: { sender: string | null; version: string | null }): ParsedAudit {
  return {
    sender: header.sender,
    version: header.version,
    machine: { serial: null, model: null, build: null, location: null, asset: null },
    currency: { decimals: 2, numeric: null, alpha: null },
    paid: null,
    test: null,
    free: null,
    cash: { sales: null, in: null, out: null },
    cashless1: null,
    cashless2: null,
    products: [],
    events: [],
    reads: null,
    other: [],
    warnings: [],
  };
}

/** One segment's elements as the data dictionary types them; a malformed number warns on the audit. */
class SegmentFields {
  constructor(
    private readonly seg: Segment,
    private readonly audit: ParsedAudit,
    private readonly seen: Set<string>,
  ) {}

  // Arrow fields: the segment readers destructure them, and eventRecord takes str and num as functions.
  readonly str = (i: number): string | null => {
    const el = this.seg.elements;
    return el[i] === undefined || el[i] === '' ? null : el[i]!;
  };

  readonly num = (i: number): number | null => {
    const s = this.str(i);
    if (s === null) return null;
    if (NUMBER.test(s)) return Number(s);
    const seg = this.seg;
    this.audit.warnings.push(
      `line ${seg.line}: ${seg.tag}${String(i + 1).padStart(2, '0')} "${s}" is not a whole number; read as empty`,
    );
    return null;
  };

  readonly fig = (v: number, c: number): Figures => ({ value: this.num(v), count: this.num(c) });

  // VA1-3, CA2, DA2, DB2 share one layout: value, count since init; value, count since reset.
  readonly totals = (): Totals => ({ sinceInit: this.fig(0, 1), sinceReset: this.fig(2, 3) });

  /** True the first time this tag is seen; a second one is warned about and kept under `other`. */
  readonly once = (): boolean => {
    const seg = this.seg;
    if (this.seen.has(seg.tag)) {
      this.audit.warnings.push(
        `line ${seg.line}: a second ${seg.tag}; the first is used, this one is kept under other`,
      );
      this.audit.other.push({ line: seg.line, text: seg.text });
      return false;
    }
    this.seen.add(seg.tag);
    return true;
  };
}

/** The audit being read, segment by segment, and what reading it needs to remember. */
class AuditReader {
  readonly audit: ParsedAudit;
  private readonly seen = new Set<string>();
  // By selection: a hostile file with 100,000 PA7 lines must stay linear.
  private readonly bySelection = new Map<string, Product>();
  private product: Product | null = null;

  constructor(header: { sender: string | null; version: string | null }) {
    this.audit = emptyAudit(header);
  }

  read(seg: Segment): void {
    const fields = new SegmentFields(seg, this.audit, this.seen);
    if (!this.readMachineSegment(seg, fields)) this.readProductSegment(seg, fields);
  }

  private productFor(selection: string): Product {
    let p = this.bySelection.get(selection);
    if (p === undefined) {
      p = { selection, price: null, productId: null, paid: null, byDevice: [] };
      this.bySelection.set(selection, p);
      this.audit.products.push(p);
    }
    return p;
  }

  /** The machine's, currency's and totals' segments, each read once; false for any other tag. */
  private readMachineSegment(seg: Segment, { str, num, totals, once }: SegmentFields): boolean {
    const audit = this.audit;
    switch (seg.tag) {
      case 'ID1':
        if (once()) audit.machine = { serial: str(0), model: str(1), build: str(2), location: str(3), asset: str(5) };
        return true;
      case 'ID4':
        if (once()) {
          const decimals = num(0);
          if (decimals !== null && decimals > 6)
            audit.warnings.push(`line ${seg.line}: ID401 ${decimals} decimal places is implausible; 2 used`);
          audit.currency = {
            decimals: decimals !== null && decimals <= 6 ? decimals : 2,
            numeric: str(1),
            alpha: str(2),
          };
        }
        return true;
      case 'VA1':
        if (once()) audit.paid = totals();
        return true;
      case 'VA2':
        if (once()) audit.test = totals();
        return true;
      case 'VA3':
        if (once()) audit.free = totals();
        return true;
      case 'CA2':
        if (once()) audit.cash.sales = totals();
        return true;
      case 'CA3':
        if (once())
          audit.cash.in = {
            sinceReset: num(0),
            sinceInit: num(4),
            toBoxSinceInit: num(5),
            toTubesSinceInit: num(6),
            billsSinceInit: num(7),
          };
        return true;
      case 'CA4':
        if (once())
          audit.cash.out = { sinceReset: num(0), manualSinceReset: num(1), sinceInit: num(2), manualSinceInit: num(3) };
        return true;
      case 'DA2':
        if (once()) audit.cashless1 = totals();
        return true;
      case 'DB2':
        if (once()) audit.cashless2 = totals();
        return true;
      case 'EA3':
        if (once()) audit.reads = { withReset: num(0), date: str(1), time: str(2), total: num(8), resets: num(9) };
        return true;
      default:
        return false;
    }
  }

  /** Products, their sales and events; a tag not modelled goes to `other` as written. */
  private readProductSegment(seg: Segment, { str, num }: SegmentFields): void {
    const audit = this.audit;
    switch (seg.tag) {
      case 'PA1': {
        const product = this.productFor(str(0) ?? `(line ${seg.line})`);
        this.product = product;
        product.price ??= num(1);
        product.productId ??= str(2);
        break;
      }
      case 'PA2': {
        // PA2 belongs to the PA1 above it (it carries no selection of its own).
        const product = this.product;
        if (product === null || product.paid !== null) audit.other.push({ line: seg.line, text: seg.text });
        else
          product.paid = { sinceInit: { count: num(0), value: num(1) }, sinceReset: { count: num(2), value: num(3) } };
        break;
      }
      case 'PA7': {
        const target = this.productFor(str(0) ?? this.product?.selection ?? `(line ${seg.line})`);
        target.byDevice.push({
          device: str(1) ?? '',
          priceList: num(2),
          price: num(3),
          totals: { sinceInit: { count: num(4), value: num(5) }, sinceReset: { count: num(6), value: num(7) } },
        });
        break;
      }
      case 'EA1':
      case 'EA2':
        audit.events.push(eventRecord(seg.tag, str, num));
        break;
      default:
        audit.other.push({ line: seg.line, text: seg.text });
    }
  }
}

function eventRecord(
  tag: 'EA1' | 'EA2',
  str: (i: number) => string | null,
  num: (i: number) => number | null,
): AuditEventRecord {
  if (tag === 'EA1')
    return {
      record: tag,
      id: str(0) ?? '',
      date: str(1),
      time: str(2),
      durationMin: num(3),
      sinceReset: null,
      sinceInit: null,
      active: null,
    };
  // EA205: 1 = active, 0 or blank = inactive.
  return {
    record: tag,
    id: str(0) ?? '',
    date: null,
    time: null,
    durationMin: num(5),
    sinceReset: num(1),
    sinceInit: num(2),
    active: str(4) === '1',
  };
}
