/**
 * The fleet link's outgoing events in the ledger (docs/decisions/fleet-link.md, migration 4). A sale event is
 * written by the same SQLite transaction as the ledger change that closed its payment, so a crash
 * can lose neither the change without its event nor the event without its change; an alarm event
 * is written when the alarm is raised or cleared. Rows leave only when the fleet worker reports the
 * broker's acknowledgement. Alarm rows are bounded (a dead broker must not fill the disk): the
 * oldest go first and are counted; sale rows are never dropped.
 */
import { randomUUID } from 'node:crypto';
import type { LedgerConnection } from './connection.js';
import type { TxRecord } from './types.js';
import { isChargedVend } from '../ipc/vend-outcome.js';
import { AUDIT_PART_BYTES } from '../fleet/contract/audit.js';

/** What a sale event says beyond the transaction: who we are, in which currency. */
export interface FleetSaleFacts {
  machineId: string;
  currencyCode: string;
  /** Bound on queued alarm rows (fleet.maxQueuedEvents). */
  maxQueuedAlarms: number;
}

export type SaleClosing = 'settlement' | 'cancel' | 'void';
export type SaleVerdict = 'accepted' | 'dead-letter';

export interface QueuedFleetEvent {
  seq: number;
  eventId: string;
  kind: 'sale' | 'alarm';
  /** The JSON text to publish. */
  body: string;
}

const DROPPED_KEY = 'fleet.events.dropped';

/** Decimal text of an amount in minor units ("1.50"), never a rounded double. */
export function minorText(minor: number, decimalPlaces: number): string {
  const negative = minor < 0;
  const digits = String(Math.abs(minor)).padStart(decimalPlaces + 1, '0');
  const whole = decimalPlaces === 0 ? digits : `${digits.slice(0, -decimalPlaces)}.${digits.slice(-decimalPlaces)}`;
  return negative ? `-${whole}` : whole;
}

export class FleetEventLog {
  private facts: FleetSaleFacts | null = null;
  private wrote = false;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly conn: LedgerConnection,
    private readonly now: () => number,
  ) {}

  /** Turns sale and alarm events on (the fleet link is configured). Off, nothing is written. */
  enable(facts: FleetSaleFacts): void {
    this.facts = facts;
  }

  get enabled(): boolean {
    return this.facts !== null;
  }

  /** Called after a transaction that wrote an event has committed. */
  onWritten(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells the listeners about rows written since the last call (call after the write committed). */
  flush(): void {
    if (!this.wrote) return;
    this.wrote = false;
    for (const listener of [...this.listeners]) listener();
  }

  /**
   * Inside a ledger write: the sale event of `tx`, which this same transaction closes. Amount is
   * what the closing charges: the Settlement's sum, or (dynamic QR) the paid price; a Cancel or
   * Void charges nothing.
   */
  recordSaleInTransaction(tx: TxRecord, closing: SaleClosing, verdict: SaleVerdict, atMs: number): void {
    const facts = this.facts;
    if (facts === null) return;
    const dp = tx.decimalPlaces;
    let products: Array<{ item: number; price: string; outcome: string }>;
    let chargedMinor: number;
    if (tx.flow === 'static') {
      const vends = this.conn
        .statement('SELECT item, price_minor, state FROM vends WHERE tx_id = ? ORDER BY seq')
        .all(tx.txId) as Array<{
        item: number;
        price_minor: number;
        state: string;
      }>;
      products = vends.map((v) => ({ item: v.item, price: minorText(v.price_minor, dp), outcome: v.state }));
      chargedMinor =
        closing === 'settlement'
          ? vends.filter((v) => isChargedVend(v.state)).reduce((sum, v) => sum + v.price_minor, 0)
          : 0;
    } else {
      const priceMinor = Math.round((tx.amount ?? 0) * 10 ** dp);
      const vended = closing === 'settlement';
      products =
        tx.item === null
          ? []
          : [{ item: tx.item, price: minorText(priceMinor, dp), outcome: vended ? 'success' : 'not-vended' }];
      chargedMinor = vended ? priceMinor : 0;
    }
    const body = {
      kind: 'sale',
      eventId: randomUUID(),
      at: new Date(atMs).toISOString(),
      machineId: facts.machineId,
      txId: tx.txId,
      flow: tx.flow,
      amount: minorText(chargedMinor, dp),
      currency: facts.currencyCode,
      products: products.slice(0, 256),
      closing,
      verdict,
    };
    this.insert(body.eventId, 'sale', JSON.stringify(body), atMs);
  }

  /**
   * Inside a ledger write: the event of a cash sale the VMC reported (another device was paid).
   * Queued as a 'sale' row: never dropped when the broker is away, unlike alarms.
   */
  recordCashSaleInTransaction(sale: {
    id: number;
    atMs: number;
    item: number;
    priceMinor: number;
    decimalPlaces: number;
  }): void {
    const facts = this.facts;
    if (facts === null) return;
    const body = {
      kind: 'cash-sale',
      eventId: randomUUID(),
      at: new Date(sale.atMs).toISOString(),
      machineId: facts.machineId,
      item: sale.item,
      price: minorText(sale.priceMinor, sale.decimalPlaces),
      currency: facts.currencyCode,
    };
    this.insert(body.eventId, 'sale', JSON.stringify(body), sale.atMs);
  }

  /**
   * Inside a ledger write: the `audit` events of one DEX read (src/fleet/contract/audit.ts), the raw
   * file in parts of AUDIT_PART_BYTES, the summary on part 0. Queued as 'sale' rows: an audit is
   * never dropped when the broker is away, and each part leaves only on its acknowledgement.
   */
  recordAuditInTransaction(audit: {
    auditId: string;
    atMs: number;
    raw: Buffer;
    summary: Record<string, unknown>;
  }): void {
    const facts = this.facts;
    if (facts === null) return;
    const parts = Math.max(1, Math.ceil(audit.raw.length / AUDIT_PART_BYTES));
    for (let part = 0; part < parts; part++) {
      const body = {
        kind: 'audit',
        eventId: randomUUID(),
        at: new Date(audit.atMs).toISOString(),
        machineId: facts.machineId,
        auditId: audit.auditId,
        part,
        parts,
        raw: audit.raw.subarray(part * AUDIT_PART_BYTES, (part + 1) * AUDIT_PART_BYTES).toString('base64'),
        summary: part === 0 ? audit.summary : null,
      };
      this.insert(body.eventId, 'sale', JSON.stringify(body), audit.atMs);
    }
  }

  /** An alarm raised or cleared: its own transaction; the oldest alarm rows beyond the bound go. */
  recordAlarm(body: {
    eventId?: string;
    code: string;
    state: 'raised' | 'cleared';
    detail: string | null;
  }): string | null {
    const facts = this.facts;
    if (facts === null) return null;
    const atMs = this.now();
    const eventId = body.eventId ?? randomUUID();
    const text = JSON.stringify({
      kind: 'alarm',
      eventId,
      at: new Date(atMs).toISOString(),
      machineId: facts.machineId,
      code: body.code,
      state: body.state,
      detail: body.detail === null ? null : body.detail.slice(0, 512),
    });
    this.conn.write(() => {
      this.insert(eventId, 'alarm', text, atMs);
      const excess =
        (this.conn.statement(`SELECT COUNT(*) AS n FROM fleet_events WHERE kind = 'alarm'`).get() as { n: number }).n -
        facts.maxQueuedAlarms;
      if (excess > 0) {
        this.conn
          .statement(
            `DELETE FROM fleet_events WHERE seq IN (SELECT seq FROM fleet_events WHERE kind = 'alarm' ORDER BY seq ` +
              `LIMIT ?)`,
          )
          .run(excess);
        this.conn
          .statement(
            `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS ` +
              `INTEGER) + ? AS TEXT)`,
          )
          .run(DROPPED_KEY, String(excess), excess);
      }
    });
    this.flush();
    return eventId;
  }

  /**
   * An `update` event (src/fleet/contract/updates.ts): its own transaction, queued in the 'sale'
   * delivery class, never dropped (a handful per update, and the operator's rollout waits on them).
   */
  recordUpdate(event: {
    version: string;
    running: string;
    state: string;
    rolloutId: string | null;
    progress: { bytes: number; size: number } | null;
    detail: string | null;
  }): string | null {
    const facts = this.facts;
    if (facts === null) return null;
    const atMs = this.now();
    const eventId = randomUUID();
    const text = JSON.stringify({
      kind: 'update',
      eventId,
      at: new Date(atMs).toISOString(),
      machineId: facts.machineId,
      version: event.version.slice(0, 64),
      running: event.running.slice(0, 64),
      state: event.state,
      rolloutId: event.rolloutId,
      progress: event.progress,
      detail: event.detail === null ? null : event.detail.slice(0, 512),
    });
    this.conn.write(() => this.insert(eventId, 'sale', text, atMs));
    this.flush();
    return eventId;
  }

  /** Queued events after `afterSeq`, oldest first. */
  pending(afterSeq: number, limit: number): QueuedFleetEvent[] {
    return this.conn.read(() =>
      (
        this.conn
          .statement('SELECT seq, event_id, kind, body FROM fleet_events WHERE seq > ? ORDER BY seq LIMIT ?')
          .all(afterSeq, limit) as Array<{
          seq: number;
          event_id: string;
          kind: 'sale' | 'alarm';
          body: string;
        }>
      ).map((r) => ({ seq: r.seq, eventId: r.event_id, kind: r.kind, body: r.body })),
    );
  }

  /**
   * The broker acknowledged these: they are delivered. Not synced on its own: nothing outside the
   * process follows from it, and if a power cut takes it back the events are published again
   * with the same eventIds (the contract's at-least-once), which saves an fsync per sale.
   */
  remove(seqs: readonly number[]): number {
    if (seqs.length === 0) return 0;
    return this.conn.writeUnsynced(
      () =>
        this.conn
          .statement('DELETE FROM fleet_events WHERE seq IN (SELECT value FROM json_each(?))')
          .run(JSON.stringify(seqs)).changes,
    );
  }

  counts(): { sales: number; alarms: number; dropped: number } {
    return this.conn.read(() => {
      const row = this.conn
        .statement(`SELECT SUM(kind = 'sale') AS sales, SUM(kind = 'alarm') AS alarms FROM fleet_events`)
        .get() as {
        sales: number | null;
        alarms: number | null;
      };
      const dropped = this.conn.statement('SELECT value FROM meta WHERE key = ?').get(DROPPED_KEY) as
        { value: string } | undefined;
      return { sales: row.sales ?? 0, alarms: row.alarms ?? 0, dropped: Number(dropped?.value ?? 0) };
    });
  }

  /** A small persistent setting of the fleet link (reader taken out of service from afar). */
  getSetting(key: string): string | null {
    return this.conn.read(
      () =>
        (
          this.conn.statement('SELECT value FROM meta WHERE key = ?').get(`fleet.${key}`) as
            { value: string } | undefined
        )?.value ?? null,
    );
  }

  setSetting(key: string, value: string | null): void {
    this.conn.write(() => {
      if (value === null) this.conn.statement('DELETE FROM meta WHERE key = ?').run(`fleet.${key}`);
      else
        this.conn
          .statement(
            'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
          )
          .run(`fleet.${key}`, value);
    });
  }

  private insert(eventId: string, kind: 'sale' | 'alarm', body: string, atMs: number): void {
    this.conn
      .statement('INSERT INTO fleet_events (event_id, kind, body, created_at_ms) VALUES (?, ?, ?, ?)')
      .run(eventId, kind, body, atMs);
    this.wrote = true;
  }
}
