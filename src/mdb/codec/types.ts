/**
 * The adapter board's line protocol (docs/decisions/mdb-adapter.md) as tagged unions, in both directions.
 *
 * Amounts are numbers in major units (`1.50` -> 1.5), the board's own notation; the reader
 * converts them to minor units before it does any arithmetic with them.
 */

/** Host -> board. */
export type BoardCommand =
  | { kind: 'version' } // V
  | { kind: 'enable'; enabled: boolean } // C,0 / C,1
  | { kind: 'setconf'; key: string; value: string } // C,SETCONF,<key>=<value>
  | { kind: 'start'; funds: number } // C,START,<funds>
  | { kind: 'vend-approve'; amount: number } // C,VEND,<amount>
  | { kind: 'vend-deny' } // C,VEND,-1
  | { kind: 'stop' }; // C,STOP

/** Reader states the VMC sets, as the board reports them. */
export type VmcReaderStatus = 'INACTIVE' | 'DISABLED' | 'ENABLED';

/** Board -> host. */
export type BoardLine =
  | { kind: 'version'; firmware: string; boardId: string } // v,<version>,<id>
  | { kind: 'enable-echo'; enabled: boolean } // c,0 / c,1
  | { kind: 'set-ok' } // c,SET,OK
  | { kind: 'status'; status: VmcReaderStatus } // c,STATUS,INACTIVE|DISABLED|ENABLED
  | { kind: 'session-idle'; funds: number | null } // c,STATUS,IDLE[,<funds>]
  | { kind: 'vend-request'; price: number; item: number } // c,STATUS,VEND,<amount>,<item>
  | { kind: 'vend-success' } // c,VEND,SUCCESS
  | { kind: 'vend-error'; code: number } // c,ERR,VEND <n>
  | { kind: 'error'; text: string } // c,ERR,<text>
  | { kind: 'poll' } // r,ACK
  /**
   * A sale another device took the money for (MDB 4.2 7.4.10 CASH SALE): c,CASHSALE,<price>,<item>
   * (see board-lines.ts).
   */
  | { kind: 'cash-sale'; price: number; item: number }
  /** A line of the board's protocol that the cashless reader has no use for: counted by kind, never noise. */
  | { kind: 'ignored'; what: IgnoredLineKind; line: string };

/**
 * Lines the board documents for its other roles (it is also a cashless master, a generic MDB
 * master and has a configuration command group), which a cashless device never acts on.
 */
export type IgnoredLineKind =
  | 'cashless-master' // d,... the board's cashless-master side (d,STATUS,IDLE, d,ERR,...)
  | 'generic-master' // p,... answers of a peripheral polled in generic master mode (p,ACK)
  | 'master-mode' // m,ACK / m,NACK: master mode switched on or off
  | 'board-config' // f,... answers of the F configuration commands (f,ACK)
  | 'unknown-command'; // c,UNKNOWN,... the board did not know a command

/** Why a line was dropped. Counted per reason so a technician sees what the wire carries. */
export type NoiseReason =
  | 'empty' // a bare line terminator
  | 'overlong' // longer than mdb.maxLineLength
  | 'binary' // control or non-ASCII bytes
  | 'unknown' // well-formed text that is no line of the protocol
  | 'malformed'; // a known line with bad fields (amount, item, arity)

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: NoiseReason; line: string };

/** c,ERR,VEND <n> codes the reader understands. */
export const VendErrorCodes = { CANCELLED: 1, DISPENSE_FAILED: 3, RESET: 5 } as const;
