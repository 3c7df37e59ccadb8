/**
 * The VMC's audits in the ledger (migration 7, docs/decisions/machine-audit.md): each read's raw file, what was
 * parsed from it, and the lifetime counters the next read is compared with. One durable write per
 * read, with its fleet events in the same transaction (like a sale): one read a day adds a few
 * kilobytes, nothing per sale. The newest KEEP_AUDITS rows stay; older ones go when a new one comes
 * (their events, if still unacknowledged, stay in fleet_events until the broker has them).
 */
import { randomUUID } from 'node:crypto';
import type { LedgerConnection } from './connection.js';
import type { FleetEventLog } from './fleet-events.js';

/** Two months of daily reads. */
export const KEEP_AUDITS = 62;

export type AuditTrigger = 'schedule' | 'command' | 'technician';

export interface AuditRow {
  auditId: string;
  readAtMs: number;
  trigger: AuditTrigger;
  protocol: string;
  durationMs: number;
  raw: Buffer;
  checkOk: boolean;
  reason: string | null;
  series: number;
  /** JSON text, opaque to the ledger (src/dex/audit/counters.ts). */
  counters: string | null;
  summary: string;
}

export class DexAuditLog {
  constructor(
    private readonly conn: LedgerConnection,
    private readonly fleetEvents: FleetEventLog,
  ) {}

  /** The newest audit whose counters can start an interval, with its series. */
  lastCounted(): { readAtMs: number; series: number; counters: string } | null {
    return this.conn.read(() => {
      const row = this.conn
        .statement(
          'SELECT read_at_ms, series, counters FROM dex_audits WHERE counters IS NOT NULL ORDER BY id DESC LIMIT 1',
        )
        .get() as { read_at_ms: number; series: number; counters: string } | undefined;
      return row === undefined ? null : { readAtMs: row.read_at_ms, series: row.series, counters: row.counters };
    });
  }

  /** The highest series number so far (0 when no audit was ever stored). */
  lastSeries(): number {
    return this.conn.read(
      () => (this.conn.statement('SELECT COALESCE(MAX(series), 0) AS s FROM dex_audits').get() as { s: number }).s,
    );
  }

  /**
   * qrvend's own charged vends with their outcome recorded in [fromMs, toMs): what the VMC counts
   * in DA2/DB2 for the reader. Static QR: vend lines that succeeded (or reset: charged, MDB 7.4.7);
   * dynamic QR: transactions that reached `vended`.
   */
  cashlessSales(fromMs: number, toMs: number): { count: number; valueMinor: number; decimalPlaces: number | null } {
    return this.conn.read(() => {
      const stat = this.conn
        .statement(
          `SELECT COUNT(*) AS n, COALESCE(SUM(v.price_minor), 0) AS s, MAX(t.decimal_places) AS dp FROM vends v JOIN \
transactions t ON t.tx_id = v.tx_id
           WHERE v.state IN ('success', 'reset') AND v.updated_at_ms >= ? AND v.updated_at_ms < ?`,
        )
        .get(fromMs, toMs) as { n: number; s: number; dp: number | null };
      const dyn = this.conn
        .statement(
          `SELECT COUNT(*) AS n, COALESCE(SUM(amount_minor), 0) AS s, MAX(decimal_places) AS dp FROM transactions
           WHERE flow = 'dynamic' AND state = 'vended' AND updated_at_ms >= ? AND updated_at_ms < ?`,
        )
        .get(fromMs, toMs) as { n: number; s: number; dp: number | null };
      return { count: stat.n + dyn.n, valueMinor: stat.s + dyn.s, decimalPlaces: stat.dp ?? dyn.dp };
    });
  }

  /** One durable write: the row, the pruning of old rows and, when the fleet link is on, its events. */
  record(row: Omit<AuditRow, 'auditId'>, eventSummary: Record<string, unknown>): AuditRow {
    const auditId = randomUUID();
    this.conn.write(() => {
      this.conn
        .statement(
          `INSERT INTO dex_audits (audit_id, read_at_ms, trigger, protocol, duration_ms, raw, check_ok, reason, \
series, counters, summary)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          auditId,
          row.readAtMs,
          row.trigger,
          row.protocol,
          row.durationMs,
          row.raw,
          row.checkOk ? 1 : 0,
          row.reason,
          row.series,
          row.counters,
          row.summary,
        );
      this.conn
        .statement('DELETE FROM dex_audits WHERE id <= (SELECT id FROM dex_audits ORDER BY id DESC LIMIT 1 OFFSET ?)')
        .run(KEEP_AUDITS);
      this.fleetEvents.recordAuditInTransaction({ auditId, atMs: row.readAtMs, raw: row.raw, summary: eventSummary });
    });
    this.fleetEvents.flush();
    return { ...row, auditId };
  }

  /** The newest audits, newest first (for `qrvend dex` listings and tests). */
  recent(limit: number): AuditRow[] {
    return this.conn.read(() =>
      (
        this.conn.statement('SELECT * FROM dex_audits ORDER BY id DESC LIMIT ?').all(limit) as Array<
          Record<string, unknown>
        >
      ).map((r) => ({
        auditId: r.audit_id as string,
        readAtMs: r.read_at_ms as number,
        trigger: r.trigger as AuditTrigger,
        protocol: r.protocol as string,
        durationMs: r.duration_ms as number,
        raw: r.raw as Buffer,
        checkOk: r.check_ok === 1,
        reason: r.reason as string | null,
        series: r.series as number,
        counters: r.counters as string | null,
        summary: r.summary as string,
      })),
    );
  }
}
