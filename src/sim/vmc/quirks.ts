/**
 * How the simulated VMC and board differ from the idealized ones (docs/decisions/real-vending-machines.md item 8):
 * which
 * cashless addresses the VMC polls, a card reader at the other address, VMC quirks seen in the
 * field, and a board firmware that knows only some SETCONF keys. The lines real VMCs and boards
 * send that the idealized VMC does not (docs/decisions/real-vending-machines.md items 1 and 7) are played by
 * field-lines.ts.
 */
export interface VmcQuirks {
  /** Cashless addresses the VMC polls (its menu's "cashless 1/2 enabled"). Default both. */
  slots?: readonly ('0x10' | '0x60')[];
  /** A card reader answers at this address (it may win selections: cardSale()). Default none. */
  cardReader?: '0x10' | '0x60' | null;
  /** The VMC resets the reader right after enabling it, this many times (-1: forever). Default 0. */
  resetAfterSetup?: number;
  /** The VMC never polls this reader (and never sets it up). */
  neverPolls?: boolean;
  /** The VMC ends a funded session nobody used after this long; null = never. */
  dropIdleSessionMs?: number | null;
  /** The VMC sends vend requests without a session even with always-idle off (some level 1/2 VMCs). */
  vendOutsideSession?: boolean;
}

export interface BoardFirmware {
  /** SETCONF keys this firmware knows; others are answered c,ERR,... Default: every key. */
  knownKeys?: readonly string[] | null;
  /** The key this firmware reads the address from. Default mdb-address. */
  addressKey?: string;
  /** The key it reads always-idle from. Default mdb-always-idle. */
  alwaysIdleKey?: string;
  /** SETCONF lines left unanswered (a firmware that ignores a key without a word). */
  silentKeys?: readonly string[];
}

export interface CardSaleRecord {
  item: number;
  price: number;
  /** Our reader had a selection pending that the VMC cancelled. */
  tookOurSelection: boolean;
}

export const DEFAULT_ADDRESS = '0x10';
