/**
 * Cash sales (docs/decisions/real-vending-machines.md item 7): sales the VMC reports that another device was paid for
 * (coins,
 * bills, the operator's own card reader), MDB 4.2 7.4.10 CASH SALE. qrvend charges nothing for
 * them; it keeps one small row each (SD-card wear: no event log, no transaction), so the
 * machine's whole turnover can be audited, and publishes each on the fleet link in the same
 * SQLite transaction, like a sale event. Rows go with the outbox's retention.
 */
import type { LedgerConnection } from './connection.js';
import type { FleetEventLog } from './fleet-events.js';
import { toMinor } from './money.js';

export interface CashSaleRecord {
  id: number;
  atMs: number;
  item: number;
  priceMinor: number;
  decimalPlaces: number;
}

export class CashSaleLog {
  constructor(
    private readonly conn: LedgerConnection,
    private readonly now: () => number,
    private readonly fleetEvents: FleetEventLog,
    /** machine.decimalPlaces, stored with each row like a transaction's. */
    private readonly decimalPlaces: number,
  ) {}

  /** One durable write: the row and, when the fleet link is on, its event. */
  record(sale: { price: number; item: number }): CashSaleRecord {
    const atMs = this.now();
    const priceMinor = toMinor(sale.price, this.decimalPlaces, 'cash sale price');
    const row = this.conn.write(() => {
      const id = Number(
        this.conn
          .statement('INSERT INTO cash_sales (at_ms, item, price_minor, decimal_places) VALUES (?, ?, ?, ?)')
          .run(atMs, sale.item, priceMinor, this.decimalPlaces).lastInsertRowid,
      );
      const record = { id, atMs, item: sale.item, priceMinor, decimalPlaces: this.decimalPlaces };
      this.fleetEvents.recordCashSaleInTransaction(record);
      return record;
    });
    this.fleetEvents.flush();
    return row;
  }

  /** Cash sales recorded (and not yet pruned), and their sum in minor units. */
  totals(): { count: number; sumMinor: number } {
    return this.conn.read(() => {
      const r = this.conn
        .statement('SELECT COUNT(*) AS n, COALESCE(SUM(price_minor), 0) AS s FROM cash_sales')
        .get() as { n: number; s: number };
      return { count: r.n, sumMinor: r.s };
    });
  }
}
