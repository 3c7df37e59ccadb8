/**
 * Lines a real VMC and board send that the idealized simulator does not (docs/mdb.md), played on
 * a running simulator; apart from the quirks (quirks.ts), which the simulator itself reads.
 */
import type { VmcSimulator } from './simulator.js';

/**
 * The VMC reports a sale another device was paid for (MDB 4.2 7.4.10 CASH SALE), as the board
 * passes it on: `c,CASHSALE,<price>,<item>` (src/mdb/codec/board-lines.ts). It changes nothing on
 * the VMC's side for this reader: the money went elsewhere.
 */
export function reportCashSale(sim: VmcSimulator, item: number, price: number): void {
  sim.spew({ kind: 'cash-sale', price, item }, 1);
}

/**
 * A VMC reset seen by the reader only as `c,STATUS,INACTIVE` (no `c,ERR,VEND 5` first), as some
 * board firmware reports it. A vend approved before it is, by MDB 4.2 7.4.7, dispensed; the
 * simulator then resets as usual (its own `c,ERR,VEND 5` comes after the INACTIVE and finds no
 * vend waiting on the agent's side).
 */
export function resetSeenAsInactive(sim: VmcSimulator): void {
  sim.spew({ kind: 'status', status: 'INACTIVE' }, 1);
  sim.resetReader();
}
