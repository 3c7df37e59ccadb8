/**
 * The fleet link's end inside the payment worker, which owns SQLite (one writer): it keeps the
 * alarm book, writes alarm events, hands queued events to the fleet worker and deletes them when
 * the broker acknowledged them, tells the fleet worker the facts of `status`, and answers the
 * commands that need the ledger, the outbox or the reader.
 *
 * Commands arrive as `fleet.command` and leave as `fleet.reply` (src/ipc/messages.ts). The switch
 * in `command()` is where each one is served; `start` (a relayed Start, docs/decisions/fleet-link.md) plugs in
 * there through `relayedStart` (src/start/relayed.ts, branch `relay`).
 */
import type { MessagePort } from 'node:worker_threads';
import { isQrvendError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { Ledger } from '../../ledger/index.js';
import type {
  FleetFacts,
  FleetToPayment,
  MainToPayment,
  PaymentToFleet,
  PaymentToMain,
  ReaderStatus,
  UpdateEventFacts,
} from '../../ipc/messages.js';
import { VERSION } from '../../core/version.js';
import { ALARM_CODES, type AlarmCode } from '../contract/alarms.js';
import { OutboxRetryArgs } from '../contract/commands.js';
import { DexReadArgs } from '../contract/audit.js';
import { emptyAlarmBook, observe, raisedCodes, settle, withRaised, type AlarmBook } from './alarm-book.js';

const TICK_MS = 1_000;
/**
 * Inside a session the reader goes session -> vend -> session at every vend. Those changes wait
 * for the next tick (one fleet.facts a second at most, always the latest) instead of costing the
 * fleet worker two messages and wake-ups per vend, on the cores the machine loop needs at that
 * very moment (docs/decisions/smallest-boards.md: counted with bench/thread-tally.ts). The fleet's status is coalesced
 * to
 * one publish a second anyway (machine-link/worker.ts); every other change of the reader goes at once.
 */
const IN_SESSION: ReadonlySet<ReaderStatus> = new Set<ReaderStatus>(['session', 'vend']);
/** CLOCK_UNSYNCED stays while the last wall-clock step is this recent. */
const CLOCK_UNSYNCED_FOR_MS = 10 * 60_000;
const OUTBOX_LIST_MAX = 100;

/** The relay helper's entry point for `cmd/start` (src/start/relayed.ts); null until it is wired in. */
export type RelayedStartHandler = (args: unknown) => Promise<unknown>;

export class CommandFailure extends Error {
  constructor(
    readonly code: 'BAD_ARGS' | 'BUSY' | 'TOO_LATE' | 'UNAVAILABLE' | 'INTERNAL' | 'UNKNOWN_COMMAND',
    message: string,
  ) {
    super(message);
  }
}

export interface FleetPaymentSideOptions {
  port: MessagePort;
  ledger: Ledger;
  log: Logger;
  toMain: (message: PaymentToMain) => void;
  monotonicNow: () => number;
  /** Wakes the outbox drainer after a manual retry. */
  kickOutbox: () => void;
  relayedStart?: RelayedStartHandler | null;
  /** `cmd/start.confirm`: the relay wrote the Approved answer to the wallet in time (src/start/relayed.ts). */
  relayedConfirm?: RelayedStartHandler | null;
  /** `cmd/dex.read`: read the VMC's audit now (src/dex/audit/service.ts); null when the build has no DEX. */
  dexRead?: (() => Promise<unknown>) | null;
  /** A catalog document the fleet worker accepted (src/daemon/catalog-switch.ts applies it between sessions). */
  catalog?: ((version: number, catalog: Extract<FleetToPayment, { type: 'fleet.catalog' }>['catalog']) => void) | null;
}

export class FleetPaymentSide {
  private book: AlarmBook;
  private reader: ReaderStatus = 'offline';
  /** A change inside a session not sent yet (IN_SESSION): the tick sends it. */
  private readerPending = false;
  private lastClockSteps = 0;
  private lastClockStepAt: number | null = null;
  private gatewayOnline = true;
  private outbox = { pending: 0, dead: 0 };
  private lastFacts = '';
  private readonly timer: NodeJS.Timeout;
  private readonly port: MessagePort;

  constructor(private readonly o: FleetPaymentSideOptions) {
    this.port = o.port;
    const now = o.monotonicNow();
    this.book = emptyAlarmBook(now);
    // What the fleet was told before a restart stays raised until observed otherwise (no repeat raise).
    const saved = o.ledger.fleetEvents.getSetting('alarms');
    if (saved !== null) {
      try {
        const codes = (JSON.parse(saved) as string[]).filter((c): c is AlarmCode =>
          (ALARM_CODES as readonly string[]).includes(c),
        );
        this.book = withRaised(this.book, codes, now);
      } catch {
        // a damaged setting only costs a repeated raise
      }
    }
    this.observe(
      'LEDGER_CORRUPT',
      o.ledger.corruptionAlarm !== null,
      o.ledger.corruptionAlarm === null
        ? null
        : 'the ledger was damaged and replaced at start; reconcile the old file by hand',
    );
    const outOfService = o.ledger.fleetEvents.getSetting('readerDisabled') === 'true';
    if (outOfService) o.toMain({ type: 'reader.service', outOfService: true });
    o.ledger.fleetEvents.onWritten(() => this.send({ type: 'fleet.events.available' }));
    this.port.on('message', (message: FleetToPayment) => this.onMessage(message));
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
    this.tick();
  }

  /** A message from the machine loop the fleet link cares about (the flows see it too). */
  fromMain(message: MainToPayment): void {
    if (message.type === 'reader.status') {
      const was = this.reader;
      this.reader = message.status;
      // VMC_RESET_LOOP comes from the machine loop (src/mdb/vmc-watch.ts) as fleet.observe: it sees
      // the board's lines, holds the reader off the bus and knows what to advise.
      if (IN_SESSION.has(was) && IN_SESSION.has(message.status)) this.readerPending = true;
      else this.pushFacts();
    } else if (message.type === 'fleet.observe') {
      this.observe(message.code, message.active, message.detail);
    } else if (message.type === 'update.event') {
      this.recordUpdate(message.event);
    }
  }

  /** Queues an `update` fleet event (durably; published like the others). */
  recordUpdate(event: UpdateEventFacts): void {
    try {
      this.o.ledger.fleetEvents.recordUpdate({ ...event, running: VERSION });
      this.o.log.info(
        {
          event: 'update.state',
          state: event.state,
          version: event.version,
          rolloutId: event.rolloutId,
          detail: event.detail,
        },
        `update ${event.version}: ${event.state}`,
      );
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message, state: event.state }, 'update event could not be written');
    }
  }

  /** The payment worker's health figures (every few seconds). */
  health(figures: { gatewayOnline: boolean; outboxPending: number; outboxDead: number; clockSteps: number }): void {
    this.gatewayOnline = figures.gatewayOnline;
    this.outbox = { pending: figures.outboxPending, dead: figures.outboxDead };
    if (figures.clockSteps > this.lastClockSteps) this.lastClockStepAt = this.o.monotonicNow();
    this.lastClockSteps = figures.clockSteps;
    this.observe(
      'GATEWAY_UNREACHABLE',
      !figures.gatewayOnline,
      'outbox deliveries to the gateway have been failing for over a minute',
    );
    this.observe(
      'OUTBOX_DEAD_LETTER',
      figures.outboxDead > 0,
      `${figures.outboxDead} outbox row(s) dead-lettered: see outbox.list, retry with outbox.retry`,
    );
    this.pushFacts();
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** The catalog version the machine now sells by (null: the site file's), for the retained status. */
  catalogApplied(version: number | null): void {
    this.send({ type: 'fleet.catalog.applied', version });
  }

  /**
   * What the machine's audit found (src/dex/audit/service.ts): a read failing again and again, a reconciliation off.
   */
  observeAudit(code: 'DEX_READ_FAILED' | 'AUDIT_MISMATCH', active: boolean, detail: string | null): void {
    this.observe(code, active, detail);
  }

  /** What the payment flows found in the gateway's answers (src/flows/static-qr/foreign-currency.ts). */
  observePayment(code: 'GATEWAY_CURRENCY_MISMATCH', active: boolean, detail: string | null): void {
    this.observe(code, active, detail);
  }

  private observe(code: AlarmCode, active: boolean, detail: string | null): void {
    this.book = observe(this.book, code, active, this.o.monotonicNow(), detail);
  }

  private tick(): void {
    const now = this.o.monotonicNow();
    this.observe(
      'DISK_UNWRITABLE',
      !this.o.ledger.writable,
      `the ledger cannot be written: ${this.o.ledger.unwritableReason ?? 'unknown'}`,
    );
    this.observe(
      'CLOCK_UNSYNCED',
      this.lastClockStepAt !== null && now - this.lastClockStepAt < CLOCK_UNSYNCED_FOR_MS,
      'the wall clock stepped (CLOCK_STEP): check time synchronisation',
    );
    const { book, changes } = settle(this.book, now);
    this.book = book;
    if (changes.length === 0) {
      if (this.readerPending) this.pushFacts();
      return;
    }
    try {
      for (const change of changes) {
        this.o.ledger.fleetEvents.recordAlarm({ code: change.code, state: change.state, detail: change.detail });
        this.o.log.info(
          { event: 'fleet.alarm', code: change.code, state: change.state },
          `fleet alarm ${change.code} ${change.state}`,
        );
      }
      this.o.ledger.fleetEvents.setSetting('alarms', JSON.stringify(raisedCodes(this.book)));
    } catch (err) {
      // An unwritable disk is itself an alarm; the status still carries the list.
      this.o.log.warn({ err: (err as Error).message }, 'fleet alarm event could not be written');
    }
    this.pushFacts();
  }

  private facts(): FleetFacts {
    let queued = { sales: 0, alarms: 0, dropped: 0 };
    try {
      queued = this.o.ledger.fleetEvents.counts();
    } catch {
      // unreadable ledger: the counts are the least of it
    }
    return {
      reader: this.reader,
      readerDisabledRemotely: this.o.ledger.fleetEvents.enabled && this.readerDisabledSetting(),
      gateway: this.gatewayOnline ? 'online' : 'offline',
      outbox: this.outbox,
      alarms: raisedCodes(this.book),
      queued,
    };
  }

  private readerDisabledSetting(): boolean {
    try {
      return this.o.ledger.fleetEvents.getSetting('readerDisabled') === 'true';
    } catch {
      return false;
    }
  }

  /** Sends the facts when something the status shows changed (queued counts alone do not count). */
  private pushFacts(force = false): void {
    this.readerPending = false;
    const facts = this.facts();
    const key = JSON.stringify({ ...facts, queued: null });
    if (!force && key === this.lastFacts) return;
    this.lastFacts = key;
    this.send({ type: 'fleet.facts', facts });
  }

  private send(message: PaymentToFleet): void {
    this.port.postMessage(message);
  }

  private onMessage(message: FleetToPayment): void {
    try {
      switch (message.type) {
        case 'fleet.events.want':
          this.send({
            type: 'fleet.events',
            events: this.o.ledger.fleetEvents.pending(message.afterSeq, Math.min(Math.max(1, message.max), 500)),
          });
          return;
        case 'fleet.events.acked':
          this.o.ledger.fleetEvents.remove(message.seqs);
          return;
        case 'fleet.link':
          if (message.connected) this.pushFacts(true);
          return;
        case 'fleet.command':
          void this.answer(message.id, message.name, message.args);
          return;
        case 'fleet.update.event':
          this.recordUpdate(message.event);
          return;
        case 'fleet.catalog':
          this.o.catalog?.(message.version, message.catalog);
          return;
      }
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message, type: message.type }, 'fleet message could not be served');
    }
  }

  private async answer(id: number, name: string, args: unknown): Promise<void> {
    try {
      const result = await this.command(name, args);
      this.send({ type: 'fleet.reply', id, ok: true, result });
    } catch (err) {
      const code = err instanceof CommandFailure ? err.code : 'INTERNAL';
      const message =
        err instanceof CommandFailure
          ? err.message
          : isQrvendError(err)
            ? err.message
            : 'the command failed inside the agent; see its log';
      if (!(err instanceof CommandFailure))
        this.o.log.error({ err: (err as Error).message, command: name }, 'fleet command failed');
      this.send({ type: 'fleet.reply', id, ok: false, error: { code, message } });
    }
  }

  /** The commands the payment side serves. */
  private async command(name: string, args: unknown): Promise<unknown> {
    const ledger = this.o.ledger;
    switch (name) {
      case 'outbox.list': {
        const rows = ledger.outbox.list({ limit: OUTBOX_LIST_MAX }).filter((r) => r.status !== 'done');
        const counts = ledger.outbox.counts();
        return {
          pending: counts.pending,
          dead: counts.dead,
          rows: rows.map((r) => ({
            id: r.id,
            txId: r.txId,
            op: r.op,
            status: r.status,
            attempts: r.attempts,
            lastError: r.lastError,
            lastCode: r.lastCode,
          })),
        };
      }
      case 'outbox.retry': {
        const parsed = OutboxRetryArgs.safeParse(args);
        if (!parsed.success)
          throw new CommandFailure(
            'BAD_ARGS',
            `args.${parsed.error.issues[0]?.path.join('.') || '(root)'}: ` +
              `${parsed.error.issues[0]?.message ?? 'invalid'}`,
          );
        const ids =
          parsed.data.id !== undefined
            ? [parsed.data.id]
            : ledger.outbox.list({ status: 'dead', limit: 10_000 }).map((r) => r.id);
        const retried: number[] = [];
        for (const rowId of ids) {
          try {
            ledger.outbox.retryDead(rowId);
            retried.push(rowId);
          } catch (err) {
            if (isQrvendError(err) && parsed.data.id !== undefined) throw new CommandFailure('BAD_ARGS', err.message);
          }
        }
        if (retried.length > 0) this.o.kickOutbox();
        return { retried };
      }
      case 'reader.disable':
      case 'reader.enable': {
        const disabled = name === 'reader.disable';
        ledger.fleetEvents.setSetting('readerDisabled', disabled ? 'true' : null);
        this.o.toMain({ type: 'reader.service', outOfService: disabled });
        this.pushFacts(true);
        return {
          readerDisabledRemotely: disabled,
          takesEffect: this.reader === 'session' || this.reader === 'vend' ? 'after the running session' : 'now',
        };
      }
      case 'dex.read': {
        const parsed = DexReadArgs.safeParse(args);
        if (!parsed.success) throw new CommandFailure('BAD_ARGS', 'dex.read takes no arguments: args must be {}');
        if (!this.o.dexRead)
          throw new CommandFailure('UNAVAILABLE', 'the machine audit is not available in this build');
        return this.o.dexRead();
      }
      case 'start':
        if (!this.o.relayedStart)
          throw new CommandFailure('UNAVAILABLE', 'relayed Start is not available in this build');
        return this.o.relayedStart(args);
      case 'start.confirm':
        if (!this.o.relayedConfirm)
          throw new CommandFailure('UNAVAILABLE', 'relayed Start is not available in this build');
        return this.o.relayedConfirm(args);
      default:
        throw new CommandFailure(
          'UNKNOWN_COMMAND',
          `the payment side serves no command ${JSON.stringify(name.slice(0, 64))}`,
        );
    }
  }
}
