/**
 * Fills a ledger file with settled static QR sessions whose Settlements wait in the outbox, through
 * the ledger's own transitions (so rows, events and bodies are exactly what a day of sales leaves).
 *
 * Seeding is not what is measured: the writes are grouped into large outer SQLite transactions
 * (the ledger's per-transition transactions nest as savepoints) so that 10,000 sessions take
 * seconds instead of 70,000 fsyncs. The file is then closed; whoever is measured opens it afresh
 * with the product's durability settings.
 */
import { encodeRequest, RawJson } from '../../src/gateway/wire/index.js';
import { silentLogger } from '../../src/core/log.js';
import type { RequestBuilders } from '../../src/gateway/envelope.js';
import { LedgerConnection, realTimers } from '../../src/ledger/connection.js';
import { openDatabase } from '../../src/ledger/db.js';
import { Ledger } from '../../src/ledger/index.js';

export interface SeedOptions {
  path: string;
  decimalPlaces: number;
  builders: RequestBuilders;
  /** TransactionId -> the PaymentInfo the gateway approved for it, as the exact text it sent. */
  authorized: ReadonlyMap<string, string>;
  authAmount: number;
  /** Each session sold one item at this price. */
  price: number;
  batch?: number;
}

/** Returns how many Settlements were queued. */
export function seedSettlements(o: SeedOptions): number {
  const logger = silentLogger();
  const { db } = openDatabase(o.path, logger, Date.now());
  const conn = new LedgerConnection(db, {
    path: o.path,
    logger,
    now: Date.now,
    timers: realTimers,
    probeIntervalMs: 2000,
  });
  const ledger = new Ledger(conn, o.decimalPlaces, Date.now, null);
  const entries = [...o.authorized];
  const batch = o.batch ?? 1000;
  let queued = 0;
  try {
    for (let i = 0; i < entries.length; i += batch) {
      db.transaction(() => {
        for (const [txId, paymentInfo] of entries.slice(i, i + batch)) {
          ledger.acceptStart({ txId, appUserId: 'bench', balance: null });
          ledger.markAuthorizing(txId, o.authAmount);
          ledger.markAuthorized(txId, paymentInfo, o.authAmount);
          ledger.openSession(txId);
          ledger.recordVendApproved(txId, { seq: 1, item: 12, price: o.price });
          ledger.recordVendResult(txId, 1, 'success');
          const body = encodeRequest(
            o.builders.settlement({
              txId,
              amount: o.price,
              paymentInfo: new RawJson(paymentInfo),
              products: [{ item: 12, price: o.price }],
              machineAuTime: '010126120000',
              ageLimit: null,
            }),
          );
          if (ledger.settleSession(txId, body).outboxId !== null) queued += 1;
        }
      })();
    }
  } finally {
    ledger.close();
  }
  return queued;
}
