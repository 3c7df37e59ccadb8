/** The MDB line and its adapter board, and where the ledger lives (docs/mdb.md, docs/configuration.md). */
import { z } from 'zod';
import { BOARD_KEY_NAMES } from '../board-keys.js';
import { PROFILE_NAMES, resolveProfile } from '../mdb-profiles.js';
import { int, AbsolutePath, MdbPort } from './primitives.js';

export const MdbSection = z
  .strictObject({
    /** Serial device of the MDB adapter board, or "sim" for the built-in VMC simulator. */
    port: MdbPort,
    baudRate: z.union([
      z.literal(9600),
      z.literal(19200),
      z.literal(38400),
      z.literal(57600),
      z.literal(115200),
      z.literal(230400),
    ]),
    /**
     * Cashless device #1 (address 0x10) or #2 (0x60, beside a card reader at #1); set on the board at every link open.
     */
    device: z.enum(['cashless1', 'cashless2']).default('cashless1'),
    /** The VMC family (src/config/mdb-profiles.ts): defaults for the keys below that the site leaves out. */
    profile: z.enum(PROFILE_NAMES).default('level3-always-idle'),
    /** Vend requests without a session start a dynamic QR payment (MDB level 3 always-idle). Default: the profile's. */
    alwaysIdle: z.boolean().optional(),
    /** For VMCs without always-idle: open a session with this credit so the consumer can select; null = off. */
    virtualCredit: z.number().positive().nullable().optional(),
    /** Close and reopen an idle virtual-credit session this often, before the VMC drops it; null = never. */
    sessionRefreshMs: int(5_000, 3_600_000).nullable().optional(),
    /** Several vends in one virtual-credit session; false = the session ends after each vend. */
    multiVend: z.boolean().optional(),
    /** The reader's advertised maximum response time (seconds) sent to the VMC. */
    maxResponseTimeS: int(5, 255).optional(),
    /** A static QR session with no vend request for this long is ended by the reader. */
    sessionIdleTimeoutMs: int(5_000, 600_000).optional(),
    /** After approving a vend, how long to wait for the VMC's success or failure. */
    vendResultTimeoutMs: int(5_000, 600_000).optional(),
    /** Ask the VMC (through the board) to report sales paid by other devices. */
    cashSale: z.boolean().optional(),
    /** The board's own timeouts, sent only when set (mdb-timeout-idle, mdb-timeout), in seconds. */
    boardTimeouts: z
      .strictObject({
        idleS: int(0, 86_400).nullable().default(null),
        messageS: int(1, 86_400).nullable().default(null),
      })
      .default({ idleS: null, messageS: null }),
    /**
     * A VMC that resets the reader `count` times within `windowS` is in a reset loop: the reader is
     * held off the bus (30 s, doubling up to 15 min) and VMC_RESET_LOOP raised (src/mdb/vmc-watch.ts).
     */
    resetLoop: z
      .strictObject({ count: int(2, 1000).default(3), windowS: int(10, 86_400).default(600) })
      .default({ count: 3, windowS: 600 }),
    /** The board firmware's names for its SETCONF keys, where they differ from src/config/board-keys.ts. */
    boardKeys: z
      .partialRecord(
        z.enum(BOARD_KEY_NAMES),
        z.string().regex(/^[a-z0-9-]{1,40}$/, 'board key names are lowercase letters, digits and -'),
      )
      .default({}),
    /** No line from the board for this long means the link is suspect (the board sends r,ACK on every poll). */
    linkWatchdogMs: int(500, 600_000),
    /** Reopen backoff after the device vanished. */
    reopenMinMs: int(50, 60_000),
    reopenMaxMs: int(100, 600_000),
    /** Lines longer than this are dropped (and counted) as noise. */
    maxLineLength: int(64, 65_536),
  })
  // The profile's values fill what the site left out. The output has only input keys, so a
  // parsed configuration parses again to itself.
  .transform(
    ({
      alwaysIdle,
      virtualCredit,
      sessionRefreshMs,
      multiVend,
      maxResponseTimeS,
      sessionIdleTimeoutMs,
      vendResultTimeoutMs,
      cashSale,
      ...rest
    }) => ({
      ...rest,
      ...resolveProfile(rest.profile, {
        alwaysIdle,
        virtualCredit,
        sessionRefreshMs,
        multiVend,
        maxResponseTimeS,
        sessionIdleTimeoutMs,
        vendResultTimeoutMs,
        cashSale,
      }),
    }),
  );

export const StoreSection = z.strictObject({
  /** The SQLite ledger file. */
  path: AbsolutePath,
  /** How long a Settlement/Cancel/Void is retried before it is dead-lettered. */
  retryWindowHours: int(1, 24 * 90),
  /** How long drained outbox rows are kept before they are pruned. */
  retentionDays: int(1, 3650),
  /** Outbox requests in flight at once (one per TransactionId at most). */
  concurrency: int(1, 64),
  backoffBaseMs: int(10, 3_600_000),
  backoffCapMs: int(100, 86_400_000),
});
