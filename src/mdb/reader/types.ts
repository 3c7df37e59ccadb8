/**
 * The cashless reader as data: its states, what can happen to it (inputs) and what it wants done
 * (effects). The transition function (transition.ts) is pure; the machine loop runs the effects.
 *
 * All money inside the reader is in integer minor units (`...Minor`); messages to the payment
 * side carry major units, converted at the edge.
 */
import type { BoardCommand, BoardLine } from '../codec/types.js';
import type { MainToPayment, PaymentToMain, SessionEndReason } from '../../ipc/messages.js';
import type { VendApproval } from '../../ipc/vend-outcome.js';

export type TimerName =
  | 'session-idle' // static session with no vend request for mdb.sessionIdleTimeoutMs
  | 'vend-result' // approved vend without success/failure for mdb.vendResultTimeoutMs
  | 'payment-wait' // dynamic QR vend request the payment side has not answered in time
  | 'board-answer' // C,START or C,STOP the board has not confirmed
  | 'config-answer' // the configuration sequence (every SETCONF answer, then V) the board has not answered
  | 'session-refresh'; // an idle virtual-credit session is closed and reopened before the VMC drops it

export interface ReaderConfig {
  decimalPlaces: number;
  alwaysIdle: boolean;
  /** mdb.virtualCredit in minor units; null = off. Ignored when alwaysIdle is on. */
  virtualCreditMinor: number | null;
  sessionIdleTimeoutMs: number;
  vendResultTimeoutMs: number;
  /** Close and reopen an idle virtual-credit session this often (mdb.sessionRefreshMs); null = never. */
  sessionRefreshMs: number | null;
  /** Several vends in one virtual-credit session (mdb.multiVend); false = end it after each vend. */
  multiVend: boolean;
  /** Backstop for a dynamic QR vend request; below the advertised maximum response time. */
  paymentWaitMs: number;
  boardAnswerMs: number;
  /** C,SETCONF commands sent between C,0 and C,1 at every (re)configuration. */
  setconf: readonly BoardCommand[];
  /**
   * A second spelling of a SETCONF key, tried once when the board refuses the first (key -> alias):
   * sources disagree on the address key's name (src/config/board-keys.ts).
   */
  setconfAliases: Readonly<Record<string, string>>;
  /** Makes requestIds unique across restarts of the agent. */
  requestIdPrefix: string;
  /**
   * Items denied inside a static QR session because their minimum age was not part of the
   * Authorization (staticQr.verifyAge false), by MDB item number -> ageLimit. Empty otherwise.
   */
  ageDeniedItems: Readonly<Record<number, number>>;
}

export interface Session {
  /** The static QR payment funding it; null for a virtual-credit session. */
  txId: string | null;
  fundsMinor: number;
  remainingMinor: number;
  /** vendSeq of the last vend approved in this session (1, 2, ...). */
  approvedVends: number;
  vendsSucceeded: number;
  amountVendedMinor: number;
  /** The consumer cancelled a vend in this session: a session end that follows is theirs. */
  consumerCancelled: boolean;
  /** End the session as soon as the vend in progress has its result. */
  endAfterVend: SessionEndReason | null;
}

export type PendingVend =
  /** Dynamic QR: vend.requested was posted; waiting for vend.approve / vend.deny. */
  | { phase: 'awaiting-payment'; requestId: string; priceMinor: number; item: number }
  /** Approved (C,VEND,<amount> written); waiting for c,VEND,SUCCESS or c,ERR,VEND <n>. */
  | {
      phase: 'awaiting-result';
      priceMinor: number;
      item: number;
      amountMinor: number;
      txId: string | null;
      requestId: string | null;
      vendSeq: number | null;
    };

export type StartPurpose =
  { kind: 'static'; txId: string; fundsMinor: number } | { kind: 'virtual'; creditMinor: number };

export type ReaderState =
  /** No link to the board. */
  | { kind: 'Offline' }
  /** Configured; the VMC has not set the reader up (after power-up or a VMC reset). */
  | { kind: 'Inactive' }
  | { kind: 'Disabled' }
  /** `holdVirtual`: the board refused a virtual-credit session; wait for the next ENABLED before retrying. */
  | { kind: 'Enabled'; holdVirtual: boolean }
  /** C,START written; waiting for c,STATUS,IDLE. `cancelReason`: stop it as soon as it opens. */
  | { kind: 'Starting'; purpose: StartPurpose; cancelReason: SessionEndReason | null }
  | { kind: 'SessionIdle'; session: Session }
  /** A vend request is being handled; `session` is null for an always-idle vend. */
  | { kind: 'Vend'; session: Session | null; vend: PendingVend }
  /** C,STOP written; waiting for c,STATUS,ENABLED. `then`: a session to start right after. */
  | { kind: 'Stopping'; session: Session; reason: SessionEndReason; then: StartPurpose | null };

export interface ReaderModel {
  state: ReaderState;
  sessionsAllowed: boolean;
  refuseReason: string | null;
  shuttingDown: boolean;
  /** V was sent and its answer not yet seen; an unasked v,... line means the board restarted. */
  versionAsked: boolean;
  nextRequestNo: number;
  /** The last dynamic approval used, so a duplicate vend.approve is not mistaken for a late one. */
  lastApproved: { requestId: string; txId: string } | null;
  /** Out of service from afar (fleet reader.disable): the reader is disabled (C,0) once no session runs. */
  outOfService: boolean;
  /** C,0 was written for outOfService and the reader has not been re-enabled since (C,1). */
  hostDisabled: boolean;
  /** SETCONF lines written whose answer (c,SET,OK) has not come yet, oldest first; null = not configuring. */
  configuring: readonly SetconfLine[] | null;
  /**
   * The board echoed the C,0 that opens the configuration. Answers before the echo belong to what
   * the board had before it: a line half-received when the link opened (at boot a tty echoes the
   * board's own polls back to it until the port is set raw) swallows our C,0, so the SETCONFs
   * behind it are refused because the reader is still enabled, not because of their keys.
   */
  disableEchoed: boolean;
  /** The board refused (or never answered) a SETCONF: the reader stays disabled until the next link open. */
  configRefused: { key: string; value: string; answer: string } | null;
  /** The machine loop holds the reader disabled (a VMC reset loop backing off); the reason, or null. */
  held: string | null;
}

export interface SetconfLine {
  key: string;
  value: string;
}

export type ReaderInput =
  | { kind: 'link.up' }
  | { kind: 'link.down'; reason: string }
  /**
   * The link watchdog expired while the device is still there. A reader disabled on purpose (held,
   * out of service) has a quiet line: its board is asked V first, and restarted only without answer.
   */
  | { kind: 'link.silent' }
  | { kind: 'line'; line: BoardLine }
  | { kind: 'payment'; message: PaymentToMain }
  | { kind: 'timeout'; timer: TimerName }
  /** Graceful stop: no new session, let the vend in progress finish. */
  | { kind: 'shutdown' }
  /** Stop now: fail what is left cleanly and disable the reader (C,0). */
  | { kind: 'shutdown.force' }
  /** Hold the reader disabled (C,0) for this reason once nothing is in flight; null releases it (C,1). */
  | { kind: 'hold'; reason: string | null };

export type ReaderEffect =
  /**
   * A line to the board. `approval`: the vend C,VEND,<amount> approves, journaled by the machine
   * loop just before the write (docs/operations.md, "The vend journal").
   */
  | { kind: 'send'; command: BoardCommand; approval?: VendApproval }
  | { kind: 'post'; message: MainToPayment }
  | { kind: 'timer.arm'; timer: TimerName; ms: number }
  | { kind: 'timer.cancel'; timer: TimerName }
  /** An input that made no sense in this state: logged and counted, never thrown. */
  | { kind: 'refused'; what: string; reason: string }
  /** Close the link and open it again (after pulsing the board's reset line when there is one). */
  | { kind: 'link.restart'; reason: string }
  /** The board is taken for silent (no line, no answer to V): the fleet's BOARD_SILENT. */
  | { kind: 'board.silent'; reason: string }
  /** The board refused a SETCONF line (or did not answer it): logged, alarmed, shown by doctor. */
  | { kind: 'config.refused'; key: string; value: string; answer: string }
  /** The board refused a key and its other spelling is being tried: logged. */
  | { kind: 'config.alias'; key: string; alias: string; answer: string }
  /** Every SETCONF line was accepted and the reader enabled (C,1): clears the alarm. */
  | { kind: 'config.done' };

export interface Transition {
  model: ReaderModel;
  effects: ReaderEffect[];
}

export const ALL_TIMERS: readonly TimerName[] = [
  'session-idle',
  'vend-result',
  'payment-wait',
  'board-answer',
  'config-answer',
  'session-refresh',
];
