/** Shared test helpers: temp ledgers on real files, a hand-driven clock and timers, body builders. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  openLedger,
  type Ledger,
  type LedgerTimers,
  type RecoveryBodies,
  type TxRecord,
  type VendLine,
} from '../../src/ledger/index.js';
import type { Logger } from '../../src/core/log.js';

export interface TempDir {
  dir: string;
  path: string;
  cleanup(): void;
}

export function tempLedgerPath(): TempDir {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-ledger-'));
  return { dir, path: join(dir, 'ledger.sqlite'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A clock the test moves by hand. */
export class ManualClock {
  constructor(public ms = Date.UTC(2025, 0, 15, 12, 0, 0)) {}
  now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** Timers that never fire by themselves: the test runs them with fire(). */
export class ManualTimers implements LedgerTimers {
  private next = 1;
  readonly pending = new Map<number, { fn: () => void; ms: number }>();
  setTimeout = (fn: () => void, ms: number): unknown => {
    const id = this.next++;
    this.pending.set(id, { fn, ms });
    return id;
  };
  clearTimeout = (handle: unknown): void => {
    this.pending.delete(handle as number);
  };
  fireAll(): void {
    const due = [...this.pending.entries()];
    this.pending.clear();
    for (const [, t] of due) t.fn();
  }
}

export function openTest(
  path: string,
  clock: ManualClock,
  extra: { timers?: LedgerTimers; logger?: Logger } = {},
): Ledger {
  return openLedger({
    path,
    decimalPlaces: 2,
    now: clock.now,
    timers: extra.timers ?? new ManualTimers(),
    logger: extra.logger,
  });
}

/** Runs `fn` on a fresh test ledger in a temporary file with a manual clock; closes and removes it after. */
export function withLedger(fn: (ledger: Ledger, clock: ManualClock) => void): void {
  const tmp = tempLedgerPath();
  const clock = new ManualClock();
  const ledger = openTest(tmp.path, clock);
  try {
    fn(ledger, clock);
  } finally {
    ledger.close();
    tmp.cleanup();
  }
}

/** Minimal request bodies with the members the ledger checks (the flows build the real ones). */
export function settlementBody(txId: string, amount: number, products: number): string {
  return JSON.stringify({
    BasicInfo: { TransactionId: txId, Amount: amount, CurrencyCode: 'EUR', CurrencyNumeric: '978' },
    Products: Array.from({ length: products }, (_, i) => ({ Code: i })),
  });
}

export function cancelBody(txId: string, paymentInfo: unknown, reasonCode: number): string {
  return JSON.stringify({
    BasicInfo: { TransactionId: txId, Amount: 0, CurrencyCode: 'EUR', CurrencyNumeric: '978' },
    PaymentInfo: paymentInfo,
    ReasonCode: reasonCode,
  });
}

export function voidBody(txId: string, paymentInfo: unknown, reasonCode: number): string {
  return JSON.stringify({
    BasicInfo: { TransactionId: txId, Amount: 1, CurrencyCode: 'EUR', CurrencyNumeric: '978' },
    PaymentInfo: paymentInfo,
    ReasonCode: reasonCode,
  });
}

/** RecoveryBodies as the flows would provide them, recording each call. */
export function recordingBodies(): RecoveryBodies & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    cancelAfterTimeout(tx: TxRecord) {
      calls.push(`cancelAfterTimeout ${tx.txId}`);
      return cancelBody(tx.txId, { IsGatewayTimeout: true }, 0);
    },
    settlement(tx: TxRecord, vends: readonly VendLine[]) {
      calls.push(`settlement ${tx.txId} ${vends.map((v) => v.seq).join(',')}`);
      const minor = vends.reduce((s, v) => s + Math.round(v.price * 100), 0);
      return settlementBody(tx.txId, minor / 100, vends.length);
    },
    cancel(tx: TxRecord, reasonCode: number) {
      calls.push(`cancel ${tx.txId} ${reasonCode}`);
      return cancelBody(tx.txId, JSON.parse(tx.paymentInfoText ?? '{}'), reasonCode);
    },
    void(tx: TxRecord, reasonCode: number) {
      calls.push(`void ${tx.txId} ${reasonCode}`);
      return voidBody(
        tx.txId,
        tx.paymentInfoText === null ? { IsGatewayTimeout: true } : JSON.parse(tx.paymentInfoText),
        reasonCode,
      );
    },
  };
}

/** Drives a static transaction up to an open session. */
export function openStaticSession(ledger: Ledger, txId: string, authAmount = 5): void {
  ledger.acceptStart({ txId, appUserId: 'user-1', balance: null });
  ledger.markAuthorizing(txId, authAmount);
  ledger.markAuthorized(txId, '{"AuthCode":"A1","AuthAmount":5.0,"Token":"t"}', authAmount);
  ledger.openSession(txId);
}
