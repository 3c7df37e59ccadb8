/**
 * Durable ledger write latency (docs/decisions/targets.md: WAL, synchronous=FULL, p99 <= 5 ms).
 *
 * Each sample is one ledger transition as the payment worker calls it (one IMMEDIATE SQLite
 * transaction, committed and fsynced before it returns) on a file on a real disk: a static QR
 * session's acceptStart, markAuthorizing, markAuthorized, openSession, then vend approved / vend
 * result pairs, the writes a busy session makes.
 */
import { performance } from 'node:perf_hooks';
import { openLedger } from '../src/ledger/index.js';
import { measured, notMeasured, type Figure } from './figure.js';
import { Budget } from './support/budget.js';
import { diskScratchDir } from './support/machine.js';
import { summarize } from './stats.js';

const TARGET = { text: 'p99 <= 5 ms', checks: [{ stat: 'p99' as const, op: '<=' as const, limit: 5 }] };
const BASE = { id: 'ledger-write', what: 'Durable ledger write (WAL, synchronous=FULL)', unit: 'ms', target: TARGET };

const PAYMENT_INFO = {
  SrvTranId: 'SIM00000001',
  AuthCode: '107919',
  AuthAmount: 1000,
  RRN: '000000000001',
  AuthDateTime: '010125120000',
  AuthSource: 'SIM',
};

export interface LedgerWriteOptions {
  /** Timed writes wanted (the budget may stop earlier). */
  writes: number;
  vendsPerSession: number;
}

export async function benchLedgerWrite(
  budget: Budget,
  options: LedgerWriteOptions = { writes: 4000, vendsPerSession: 50 },
): Promise<Figure[]> {
  const scratch = diskScratchDir('ledger');
  const ledger = openLedger({ path: `${scratch.dir}/ledger.sqlite`, decimalPlaces: 2 });
  const samples: number[] = [];
  const timed = <T>(fn: () => T): T => {
    const t0 = performance.now();
    const out = fn();
    samples.push(performance.now() - t0);
    return out;
  };
  try {
    let session = 0;
    while (samples.length < options.writes && !budget.spent) {
      const txId = `bench-ledger-${String(++session).padStart(6, '0')}`;
      timed(() => ledger.acceptStart({ txId, appUserId: 'bench', balance: null }));
      timed(() => ledger.markAuthorizing(txId, 1000));
      timed(() => ledger.markAuthorized(txId, PAYMENT_INFO, 1000));
      timed(() => ledger.openSession(txId));
      for (let seq = 1; seq <= options.vendsPerSession && samples.length < options.writes && !budget.spent; seq++) {
        timed(() => ledger.recordVendApproved(txId, { seq, item: seq % 40, price: 1.5 }));
        timed(() => ledger.recordVendResult(txId, seq, 'success'));
      }
    }
    return [
      measured(
        {
          ...BASE,
          context: {
            file: scratch.mount ? `${scratch.mount.device} (${scratch.mount.fsType})` : 'unknown',
            sessions: session,
            budgetStopped: samples.length < options.writes,
          },
        },
        { samples: samples.length, summary: summarize(samples) },
      ),
    ];
  } catch (err) {
    return [notMeasured(BASE, 'error', `ledger writes failed: ${(err as Error).message}`)];
  } finally {
    ledger.close();
    scratch.remove();
  }
}
