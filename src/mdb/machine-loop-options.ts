/**
 * What the machine loop (machine-loop.ts, docs/decisions/threads.md) is given and what it reports:
 * its options and its figures, kept apart so the loop's file holds only the loop.
 */
import type { QrvendConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import type { MainToPayment, ReaderStatus } from '../ipc/messages.js';
import type { VendApproval } from '../ipc/vend-outcome.js';
import type { NoiseCounter } from './codec/index.js';
import type { LinkStats, OpenLink } from './transport/index.js';
import type { VmcFacts } from './vmc-watch.js';
import type { ReaderState } from './reader/index.js';

export interface BoardResetLine {
  /** Pulses the board's reset line (src/device/gpio.ts); resolves when the board is released. */
  pulse(): Promise<void>;
}

export interface MachineLoopOptions {
  mdb: QrvendConfig['mdb'];
  /** machine.decimalPlaces */
  decimalPlaces: number;
  /** machine.currencyNumeric, sent to the board as mdb-currency-code */
  currencyNumeric: string;
  /** Opens the link to the board; see createMdbTransport(). */
  openTransport: OpenLink;
  /** Checked when the link goes quiet; default: mdb.port, or none for `sim`. */
  devicePath?: string | null;
  post(message: MainToPayment): void;
  log: Logger;
  boardReset?: BoardResetLine;
  now?: () => number;
  /** Called once, when C,1 is first written (systemd READY, the cold-start benchmark). */
  onEnableWritten?: (atMs: number) => void;
  /** How long stop() lets a vend in progress finish before failing it (default 15 s). */
  stopTimeoutMs?: number;
  /** How long the board may take to confirm C,START / C,STOP (default 5 s). */
  boardAnswerMs?: number;
  /** Prefix of dynamic QR requestIds (default: random per process). */
  requestIdPrefix?: string;
  /** Items static QR sessions deny for their age limit (see ageDeniedItems in src/mdb/reader). */
  ageDeniedItems?: Readonly<Record<number, number>>;
  /** Where the VMC facts go for `qrvend doctor` (src/mdb/facts-file.ts); null = nowhere. */
  factsPath?: string | null;
  /** Monotonic clock for the VMC watch (default performance.now). */
  monotonicNow?: () => number;
  /** The vend journal (src/ledger/vend-journal-writer.ts): each vend just before its C,VEND is written. */
  journalApproval?: (approval: VendApproval) => void;
}

export interface MachineLoopStats {
  state: ReaderState['kind'];
  status: ReaderStatus;
  txId: string | null;
  linesIn: number;
  linesOut: number;
  /** Lines written while the link was down (lost). */
  linesDropped: number;
  noise: ReturnType<NoiseCounter['snapshot']>;
  /** Inputs refused as out of sequence, and the last reason. */
  refused: number;
  lastRefusal: string | null;
  /** Cash sales the VMC reported (another device was paid; recorded, never charged). */
  cashSales: number;
  link: LinkStats;
  vmc: VmcFacts;
}
