/**
 * Alarm codes the fleet sees (docs/decisions/fleet-link.md). Stable: operators build dashboards and pager
 * rules on them. Each is raised and cleared from what the daemon already knows.
 */
export const ALARM_CODES = [
  /** The serial link to the MDB board is down (port gone, cannot open). */
  'READER_OFFLINE',
  /** The port is open but the board sends nothing (link watchdog). */
  'BOARD_SILENT',
  /** Gateway calls fail with network errors or timeouts. */
  'GATEWAY_UNREACHABLE',
  /** At least one outbox row is dead-lettered (needs a person: `qrvend outbox`). */
  'OUTBOX_DEAD_LETTER',
  /** The ledger cannot take writes: new sessions are refused. */
  'DISK_UNWRITABLE',
  /** The ledger was damaged and replaced, or its identity changed (`qrvend ledger acknowledge-loss` clears it). */
  'LEDGER_CORRUPT',
  /** The wall clock stepped (CLOCK_STEP) or is implausible. */
  'CLOCK_UNSYNCED',
  /**
   * The VMC reset the reader repeatedly right after setting it up; the
   * reader is held off the bus for a while (docs/mdb.md).
   */
  'VMC_RESET_LOOP',
  /** The adapter board refused (or never answered) a C,SETCONF line: the reader stays disabled (docs/mdb.md). */
  'BOARD_CONFIG_REFUSED',
  /** A config.set left the agent unhealthy and was rolled back (raised once, cleared by the next good config.set). */
  'CONFIG_ROLLED_BACK',
  /**
   * An update's trial failed and the previous release is running again (the detail says why; cleared by the next
   * healthy update).
   */
  'UPDATE_ROLLED_BACK',
  /**
   * A downloaded update has waited past its maximum deferral for the machine
   * to be idle; it still waits, never forcing a restart.
   */
  'UPDATE_DEFERRED',
  /** The VMC's audit could not be read over the DEX line (no answer, CRC errors, timeouts); the detail says which. */
  'DEX_READ_FAILED',
  /**
   * The VMC's cashless counter (DA or DB) and qrvend's ledger disagree
   * beyond dex.reconcileTolerance over one audit interval.
   */
  'AUDIT_MISMATCH',
  /**
   * The gateway approved an Authorization in another currency than asked (the detail names both);
   * cleared by the next approval in the asked one.
   */
  'GATEWAY_CURRENCY_MISMATCH',
  /** The vend journal beside the ledger cannot be written: a crash could lose a vend (docs/operations.md). */
  'VEND_JOURNAL_FAILED',
] as const;

export type AlarmCode = (typeof ALARM_CODES)[number];
