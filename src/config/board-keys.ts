/**
 * The adapter board's names for its cashless-slave parameters (`C,SETCONF,<key>=<value>`).
 *
 * Sources disagree on the address key: the board maker's parameter table, as copied into a public
 * client of the board ("0x10 or 0x60 - Cashless device address"), names it `mdb-address`; several
 * open clients send `mdb-addr`, but only ever with 0x10, the board's own default, so they could
 * not have noticed a key the firmware ignores. We follow the parameter table; a site whose firmware
 * wants another name sets `mdb.boardKeys` (no new release), and a refused key is never silent
 * (src/mdb/reader/configure.ts). docs/mdb.md lists the sources.
 */
export const BOARD_KEY_NAMES = [
  'address',
  'alwaysIdle',
  'currencyCode',
  'decimalPlaces',
  'scaleFactor',
  'timeoutVend',
  'timeoutIdle',
  'timeout',
  'cashSale',
] as const;
export type BoardKeyName = (typeof BOARD_KEY_NAMES)[number];

export const DEFAULT_BOARD_KEYS: Readonly<Record<BoardKeyName, string>> = {
  address: 'mdb-address',
  alwaysIdle: 'mdb-always-idle',
  currencyCode: 'mdb-currency-code',
  decimalPlaces: 'mdb-decimal-places',
  scaleFactor: 'mdb-scale-factor',
  timeoutVend: 'mdb-timeout-vend',
  timeoutIdle: 'mdb-timeout-idle',
  timeout: 'mdb-timeout',
  cashSale: 'mdb-cashsale-enabled',
};

/**
 * The other spelling tried once when the board refuses a default key name (not when the site named
 * the key in mdb.boardKeys: then the site's word stands). `mdb-addr` is what the design and several
 * clients send; a firmware that knows only it still ends at the right address, and one that knows
 * neither stays disabled with the alarm.
 */
export const BOARD_KEY_ALIASES: Readonly<Partial<Record<BoardKeyName, string>>> = { address: 'mdb-addr' };

/** MDB 4.2 section 7: cashless device #1 answers at 0x10, #2 at 0x60. */
export const DEVICE_ADDRESS = { cashless1: '0x10', cashless2: '0x60' } as const;
export type CashlessDevice = keyof typeof DEVICE_ADDRESS;
