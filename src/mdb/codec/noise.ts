import type { IgnoredLineKind, NoiseReason } from './types.js';

/** Dropped lines per reason, plus a short sample of the last one for diagnostics. */
export class NoiseCounter {
  private readonly counts: Record<NoiseReason, number> = { empty: 0, overlong: 0, binary: 0, unknown: 0, malformed: 0 };
  private last: { reason: NoiseReason; sample: string } | null = null;
  /** Lines of the protocol the reader has no use for, per kind: known, so not noise. */
  private readonly ignored: Partial<Record<IgnoredLineKind, number>> = {};

  add(reason: NoiseReason, line: string): void {
    this.counts[reason] += 1;
    // A sample helps a technician recognise a baud-rate mismatch; keep it short and printable.
    this.last = { reason, sample: line.slice(0, 40).replace(/[^\x20-\x7e]/g, '.') };
  }

  addIgnored(kind: IgnoredLineKind): void {
    this.ignored[kind] = (this.ignored[kind] ?? 0) + 1;
  }

  total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }

  snapshot(): {
    byReason: Record<NoiseReason, number>;
    total: number;
    last: { reason: NoiseReason; sample: string } | null;
    ignoredByKind: Partial<Record<IgnoredLineKind, number>>;
  } {
    return { byReason: { ...this.counts }, total: this.total(), last: this.last, ignoredByKind: { ...this.ignored } };
  }
}
