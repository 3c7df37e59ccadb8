/**
 * Typed messages between the threads (docs/decisions/threads.md).
 *
 * The main thread is the machine loop: serial port, adapter codec, reader state machine, session
 * funds and local vend approval. It never waits on the network, SQLite or rendering. The payment
 * worker owns the Start endpoint, the flows, the gateway client, the ledger and the outbox. The
 * display worker renders screens. Messages are plain structured-clone data, tagged by `type`.
 *
 * Amounts are numbers in major units, already rounded to the machine's decimal places.
 * `txId` is the gateway TransactionId of the payment a message belongs to.
 */
import type { ThreadMemory } from '../core/thread-memory.js';

/** Reader state as the payment side needs it (Start's busy check, the display, the LED). */
export type ReaderStatus = 'offline' | 'inactive' | 'disabled' | 'enabled' | 'session' | 'vend';

export type SessionEndReason =
  | 'complete' // the VMC ended the session (session complete)
  | 'consumer-cancel' // the consumer cancelled on the machine
  | 'reader-cancel' // qrvend ended it (C,STOP), e.g. funds used up or shutdown
  | 'idle-timeout' // no vend request within mdb.sessionIdleTimeoutMs
  | 'vmc-reset' // the VMC or the board reset during the session
  | 'disabled' // the VMC disabled the reader during the session
  | 'link-lost'; // the serial link to the board went away

export type VendOutcome =
  | 'success' // c,VEND,SUCCESS: product dispensed, the consumer owes the price
  | 'failed' // c,ERR,VEND 3: dispense failed
  | 'cancelled' // c,ERR,VEND 1: cancelled before dispensing
  // c,ERR,VEND 5, c,STATUS,INACTIVE or a board restart after the approval: charged, MDB 4.2 7.4.7 (vend-outcome.ts)
  | 'reset'
  | 'timeout' // no result within mdb.vendResultTimeoutMs; treated as failed (consumer not charged)
  | 'expired'; // an approval arrived after the vend request had already been answered or dropped

/** Main thread -> payment worker. */
export type MainToPayment =
  | { type: 'reader.status'; status: ReaderStatus; txId: string | null }
  | { type: 'board.info'; firmware: string; boardId: string }
  /** The board confirmed the session that session.begin asked for. */
  | { type: 'session.started'; txId: string; funds: number }
  /** The reader could not open the session that session.begin asked for (e.g. reader not enabled). */
  | { type: 'session.refused'; txId: string; reason: string }
  /** A vend request outside a funded session: the payment side decides (dynamic QR). */
  | { type: 'vend.requested'; requestId: string; price: number; item: number }
  /** A vend approved locally inside a static QR session (record it; the outcome follows). */
  | { type: 'vend.approved'; txId: string; vendSeq: number; price: number; item: number }
  /**
   * A vend denied locally inside a static QR session (price above the remaining funds, or an
   * age-restricted item the Authorization did not verify: `ageLimit` is then its minimum age).
   */
  | { type: 'vend.denied'; txId: string; price: number; item: number; reason: string; ageLimit: number | null }
  /**
   * What became of an approved vend. For a static session `txId` and `vendSeq` name it; for a
   * dynamic QR vend `requestId` does (and `txId` is the one payment.approve named).
   */
  | {
      type: 'vend.result';
      txId: string | null;
      requestId: string | null;
      vendSeq: number | null;
      outcome: VendOutcome;
      detail: string | null;
    }
  /** A dynamic QR vend request ended without a vend.approve being used (VMC cancel, timeout, reset). */
  | {
      type: 'vend.request.ended';
      requestId: string;
      reason: string;
      /**
       * True when the consumer cancelled on the machine; false for machine causes (deadline, reset, link, shutdown).
       */
      byConsumer: boolean;
    }
  | { type: 'session.ended'; txId: string; reason: SessionEndReason; vendsSucceeded: number; amountVended: number }
  /** The VMC reported a sale another device was paid for (MDB CASH SALE): recorded, never charged. */
  | { type: 'cash.sale'; price: number; item: number }
  /** A fleet alarm condition only the main thread sees (link down, board silent, config rolled back). */
  | {
      type: 'fleet.observe';
      code:
        | 'READER_OFFLINE'
        | 'BOARD_SILENT'
        | 'CONFIG_ROLLED_BACK'
        | 'BOARD_CONFIG_REFUSED'
        | 'VMC_RESET_LOOP'
        | 'UPDATE_DEFERRED'
        | 'UPDATE_ROLLED_BACK'
        | 'VEND_JOURNAL_FAILED';
      active: boolean;
      detail: string | null;
    }
  /**
   * An activation waits (src/updates/activation.ts): hold off new sessions (the Start endpoint
   * answers busy) or let them go again; answered at once with `update.activity`.
   */
  | { type: 'update.hold'; hold: boolean }
  /** Queue an `update` fleet event (durably, like alarms); the payment side adds the ids and times. */
  | { type: 'update.event'; event: UpdateEventFacts }
  /**
   * A read of the VMC's audit over the DEX line ended (src/dex/main-side.ts): the bytes as read, or
   * why not. The payment worker checks, parses, stores, reconciles and publishes it. `requestId`
   * answers a dex.read the payment side asked for; null for a scheduled read.
   */
  | { type: 'dex.audit'; requestId: number | null; trigger: 'schedule' | 'command'; atMs: number; read: DexAuditRead }
  | { type: 'shutdown' };

/**
 * What an `update` fleet event says (src/fleet/contract/updates.ts UpdateEvent, less what the ledger side fills in).
 */
export interface UpdateEventFacts {
  version: string;
  state:
    | 'offered'
    | 'refused'
    | 'downloading'
    | 'verified'
    | 'waiting'
    | 'activating'
    | 'trial'
    | 'healthy'
    | 'failed'
    | 'rolled-back';
  rolloutId: string | null;
  progress: { bytes: number; size: number } | null;
  detail: string | null;
}

export type DexAuditRead =
  | { ok: true; protocol: 'dex-ucs' | 'ddcmp'; bytes: Uint8Array; durationMs: number }
  | { ok: false; code: string; message: string };

/**
 * One thread's V8 heap, from v8.getHeapStatistics() inside that thread
 * (threadMemory(); rss is process-wide, so left out).
 */
export type { ThreadMemory };

/** Payment worker -> main thread. */
export type PaymentToMain =
  /** A static QR authorization was approved: open an MDB session with these funds. */
  | { type: 'session.begin'; txId: string; funds: number }
  /** End the current session (e.g. the payment side must stop it). */
  | { type: 'session.cancel'; txId: string; reason: string }
  /** A dynamic QR payment for this vend request was approved. */
  | { type: 'vend.approve'; requestId: string; txId: string; amount: number }
  /** The dynamic QR payment failed or timed out: deny the vend request. */
  | { type: 'vend.deny'; requestId: string; reason: string }
  /**
   * A new catalog was applied between sessions (src/daemon/catalog-switch.ts): the items a static QR
   * session must deny for their age (item -> age limit), as ageDeniedItems() gives them.
   */
  | { type: 'catalog.set'; ageDeniedItems: Record<number, number> }
  /** Refuse new sessions (disk cannot take writes, ledger unusable) or allow them again. */
  | { type: 'sessions.allowed'; allowed: boolean; reason: string | null }
  /** Read the VMC's audit now (the fleet's dex.read); answered with dex.audit of the same requestId. */
  | { type: 'dex.read'; requestId: number }
  /**
   * Out of service from afar (fleet reader.disable, persisted in the
   * ledger): disable the reader after the running session.
   */
  | { type: 'reader.service'; outOfService: boolean }
  /** Payment-side health for the status LED and doctor; `memory` is the worker's own V8 heap (for the stats line). */
  | {
      type: 'health';
      outboxPending: number;
      outboxDead: number;
      gatewayOnline: boolean;
      memory?: ThreadMemory;
      clockSteps?: number;
      /**
       * Start counters (direct and relayed; relayedTooLate = refused past the relay's deadline;
       * relayedDropped = Approved, never confirmed by the relay, nothing authorized; relayedUnvouched =
       * refused for the relay's voucher).
       */
      starts?: {
        requests: number;
        accepted: number;
        relayed: number;
        relayedTooLate: number;
        relayedDropped: number;
        relayedUnvouched: number;
      };
    }
  /** The worker finished start-up (ledger open, recovery done, Start endpoint listening). */
  | { type: 'ready'; startUrl: string | null }
  | { type: 'fatal'; code: string; message: string }
  /** Shutdown finished: Start endpoint closed, outbox sends settled, ledger closed. */
  | { type: 'stopped' }
  /**
   * Answer to update.hold: what is in flight on the payment side (null:
   * nothing), and whether new sessions are held off.
   */
  | { type: 'update.activity'; busy: string | null; held: boolean }
  /**
   * The vend journal (src/ledger/vend-journal.ts): these journaled results are in the ledger (keys of
   * vendKey), and, once true, every earlier run's record is taken over: the main thread may cut it back.
   */
  | { type: 'vend.journal'; recordedKeys: string[]; takenOver: boolean };

/** Why a payment did not go through, in words a shopper understands (src/display/catalog). */
export type DeclineReason =
  | 'insufficient-funds'
  | 'declined'
  | 'timed-out'
  | 'cancelled'
  | 'cancelled-reversed'
  | 'vend-failed-reversed'
  | 'qr-unavailable'
  | 'no-answer'
  | 'underpaid-reversed'
  | 'age-restricted';

/** Why the machine takes no payments; `code` on the screen tells the technician more. */
export type OutOfOrderReason = 'reader-offline' | 'unavailable' | 'storage';

/**
 * What the display shows. Screens carry facts and message keys, never words: the display worker
 * picks the words in display.language and formats amounts for display.locale.
 */
export type Screen =
  | { kind: 'idle'; qrText: string }
  | {
      kind: 'dynamic-qr';
      qrText: string;
      amount: number;
      currencyCode: string;
      decimalPlaces: number;
      /** MDB item number, named from the catalog; null = no product line. */
      item: number | null;
      /** When the payment expires (epoch ms): the countdown bar runs from when it went up to this. */
      expiresAtMs: number;
    }
  | { kind: 'authorizing' }
  /** The reader is not enabled yet and its grace period runs (a normal start): neutral, no fault shown. */
  | { kind: 'waiting' }
  | { kind: 'session'; amount: number; currencyCode: string; decimalPlaces: number }
  | { kind: 'vending'; amount: number | null; currencyCode: string; decimalPlaces: number; item: number | null }
  /** After a sale; `txId` fills display.receiptUrl's {txId} for the receipt QR. */
  | { kind: 'thank-you'; amount: number | null; currencyCode: string; decimalPlaces: number; txId: string | null }
  /** A session that sold nothing: nothing was charged. */
  | { kind: 'session-ended' }
  /** `code` is the gateway's decline code when there is one (shown small, for support). */
  | { kind: 'declined'; reason: DeclineReason; code: number | null }
  /** `code` is short and stable, for the technician (e.g. E-RDR). */
  | { kind: 'out-of-order'; reason: OutOfOrderReason; code: string };

/** Anyone -> display worker. */
export type ToDisplay =
  | { type: 'show'; screen: Screen }
  /** The product names changed (a catalog applied between sessions): the next screens name them so. */
  | { type: 'catalog'; catalog: Record<string, { name: string; names?: Partial<Record<string, string>> }> }
  /** Report the worker's V8 heap (answered with `memory`; the stats line asks once per line). */
  | { type: 'memory' }
  | { type: 'shutdown' };

/** Display worker -> its owner. */
export type FromDisplay =
  | { type: 'rendered'; kind: Screen['kind']; ms: number }
  | { type: 'unavailable'; output: 'framebuffer' | 'png' | 'terminal'; reason: string }
  | { type: 'memory'; memory: ThreadMemory };

// --- Fleet link (docs/decisions/fleet-link.md; src/fleet/machine-link) ---------------------------------------

/** What the fleet's `status` says about the machine, as the payment worker knows it. */
export interface FleetFacts {
  reader: ReaderStatus;
  readerDisabledRemotely: boolean;
  gateway: 'online' | 'offline';
  outbox: { pending: number; dead: number };
  alarms: string[];
  /** Events waiting for the broker's acknowledgement, and alarm events dropped by the bound. */
  queued: { sales: number; alarms: number; dropped: number };
}

/** One queued event as the fleet worker publishes it. */
export interface FleetQueuedEvent {
  seq: number;
  eventId: string;
  kind: 'sale' | 'alarm';
  body: string;
}

/**
 * One catalog item as the threads pass it (src/config/schema CatalogEntry: names per language for
 * the screens, measurement and unit for the gateway, the age limit for AgeLimitation).
 */
export interface CatalogItemFacts {
  name: string;
  names: Partial<Record<string, string>>;
  measurement: number;
  unitOfMeasurement: string;
  ageLimit: number | null;
}

/** Fleet worker -> payment worker (MessagePort handed to both by the main thread). */
export type FleetToPayment =
  /**
   * A command that needs the payment side (ledger, outbox, reader, relayed
   * Start); answered with fleet.reply of the same id.
   */
  | { type: 'fleet.command'; id: number; name: string; args: unknown }
  /** Send queued events with seq > afterSeq (at most max). */
  | { type: 'fleet.events.want'; afterSeq: number; max: number }
  /** The broker acknowledged (PUBACK) these events: delete them. */
  | { type: 'fleet.events.acked'; seqs: number[] }
  | { type: 'fleet.link'; connected: boolean }
  /** Queue an `update` fleet event (the fleet worker's update agent, src/updates/agent.ts). */
  | { type: 'fleet.update.event'; event: UpdateEventFacts }
  /**
   * A catalog document was accepted (src/fleet/machine-link/catalog-receiver.ts): the whole effective catalog
   * (the site's with the document's items over it), to apply between sessions.
   */
  | { type: 'fleet.catalog'; version: number; catalog: Record<string, CatalogItemFacts> };

/** Payment worker -> fleet worker. */
export type PaymentToFleet =
  | { type: 'fleet.reply'; id: number; ok: true; result: unknown }
  | { type: 'fleet.reply'; id: number; ok: false; error: { code: string; message: string } }
  | { type: 'fleet.events'; events: FleetQueuedEvent[] }
  /** New events were written: ask for them. */
  | { type: 'fleet.events.available' }
  | { type: 'fleet.facts'; facts: FleetFacts }
  /** The catalog the machine now sells by (null: the site file's alone), applied between sessions. */
  | { type: 'fleet.catalog.applied'; version: number | null };

/** Main thread -> fleet worker. */
export type MainToFleet = { type: 'fleet.stats'; stats: Record<string, unknown> } | { type: 'shutdown' };

/** Fleet worker -> main thread. */
export type FleetToMain =
  /** Exit with RESTART_EXIT_CODE so systemd starts the agent again (service.restart, config.set). */
  | { type: 'fleet.restart'; reason: string }
  | { type: 'fleet.link'; connected: boolean }
  /** A configuration trial's probe came back over the machine's own command topic (probe.ts). */
  | { type: 'fleet.probe.returned' }
  /** An update is downloaded and verified: activate it at the next idle moment (src/updates/activation.ts). */
  | { type: 'update.ready'; version: string; rolloutId: string | null }
  /** The worker's V8 heap, answered to each `fleet.stats` (for the stats line). */
  | { type: 'fleet.memory'; memory: ThreadMemory }
  | { type: 'stopped' };
