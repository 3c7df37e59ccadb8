/**
 * The machine loop (docs/decisions/threads.md): the main thread's side of qrvend. It owns the link to the
 * adapter board, the codec, the reader state machine and its timers, and talks to the payment
 * worker only through MainToPayment / PaymentToMain messages.
 *
 * Nothing here waits on the network, on SQLite or on rendering: a vend request inside a funded
 * session is approved in the same synchronous call that parsed the request line (the approval is
 * the transition's first effect and the write is queued before anything else happens).
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { RepeatedLog } from '../core/log-limiter.js';
import type { Logger } from '../core/log.js';
import type { MainToPayment, PaymentToMain, ReaderStatus } from '../ipc/messages.js';
import { encodeCommand, NoiseCounter, parseBoardLine } from './codec/index.js';
import { LinkSupervisor } from './transport/index.js';
import { DEVICE_ADDRESS } from '../config/board-keys.js';
import { overridesOf, PROFILES } from '../config/mdb-profiles.js';
import { VmcWatch } from './vmc-watch.js';
import type { MachineLoopOptions, MachineLoopStats } from './machine-loop-options.js';
import { sameReaderView, type ReaderView } from './reader-view.js';
import { VmcFactsWriter } from './facts-writer.js';
import type { VendApproval } from '../ipc/vend-outcome.js';
import {
  initialModel,
  isQuiescent,
  readerConfigFrom,
  readerStatus,
  transition,
  type ReaderConfig,
  type ReaderEffect,
  type ReaderInput,
  type ReaderModel,
  type TimerName,
} from './reader/index.js';

export type { BoardResetLine, MachineLoopOptions, MachineLoopStats } from './machine-loop-options.js';

export const REFUSAL_LOG_INTERVAL_MS = 10_000;

export class MachineLoop extends EventEmitter {
  private model: ReaderModel = initialModel();
  private cfg: ReaderConfig;
  private readonly link: LinkSupervisor;
  private readonly timers = new Map<TimerName, NodeJS.Timeout>();
  private readonly noise = new NoiseCounter();
  /** At most one "input refused" line per interval: a board spewing noise must not flood the journal. */
  private readonly refusalLog = new RepeatedLog({
    intervalMs: REFUSAL_LOG_INTERVAL_MS,
    write: (fields, repeated) =>
      repeated === 0
        ? this.log.info(fields, 'MDB: input refused (out of sequence)')
        : this.log.info(
            { ...fields, repeated, intervalMs: REFUSAL_LOG_INTERVAL_MS },
            `MDB: input refused (out of sequence) ${repeated} more times`,
          ),
  });
  private readonly queue: ReaderInput[] = [];
  private dispatching = false;
  private lastStatus: { status: ReaderStatus; txId: string | null } | null = null;
  private enableWritten = false;
  private stopping: Promise<void> | null = null;
  private quiescentWaiters: Array<() => void> = [];
  private counters = {
    linesIn: 0,
    linesOut: 0,
    linesDropped: 0,
    refused: 0,
    lastRefusal: null as string | null,
    cashSales: 0,
  };
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly watch: VmcWatch;
  private readonly facts: VmcFactsWriter | null;
  private holdTimer: NodeJS.Timeout | null = null;
  /** The board as the link watchdog sees it, since the port last opened (readerView()). */
  private board = { polling: false, answering: false };
  private lastView: ReaderView | null = null;

  constructor(private readonly o: MachineLoopOptions) {
    super();
    this.now = o.now ?? Date.now;
    this.log = o.log;
    this.cfg = readerConfigFrom({
      mdb: o.mdb,
      decimalPlaces: o.decimalPlaces,
      currencyNumeric: o.currencyNumeric,
      requestIdPrefix: o.requestIdPrefix ?? `vr${randomBytes(4).toString('hex')}`,
      boardAnswerMs: o.boardAnswerMs,
      ageDeniedItems: o.ageDeniedItems,
    });
    const mono = o.monotonicNow ?? (() => performance.now());
    this.watch = new VmcWatch({
      profile: o.mdb.profile,
      level: PROFILES[o.mdb.profile].level,
      profileOverrides: overridesOf(o.mdb.profile, o.mdb),
      device: o.mdb.device,
      address: DEVICE_ADDRESS[o.mdb.device],
      cfg: this.cfg,
      resetLoop: { count: o.mdb.resetLoop.count, windowMs: o.mdb.resetLoop.windowS * 1000 },
      now: mono,
    });
    this.facts = o.factsPath ? new VmcFactsWriter(o.factsPath, this.watch, o.log) : null;
    this.link = new LinkSupervisor({
      open: o.openTransport,
      devicePath: o.devicePath !== undefined ? o.devicePath : o.mdb.port === 'sim' ? null : o.mdb.port,
      maxLineLength: o.mdb.maxLineLength,
      linkWatchdogMs: o.mdb.linkWatchdogMs,
      reopenMinMs: o.mdb.reopenMinMs,
      reopenMaxMs: o.mdb.reopenMaxMs,
      log: o.log,
      onUp: () => {
        this.boardUnheard();
        this.emit('link', { up: true, silent: false, reason: null });
        this.dispatch({ kind: 'link.up' });
      },
      onDown: (reason) => {
        this.boardUnheard();
        this.emit('link', { up: false, silent: false, reason });
        this.dispatch({ kind: 'link.down', reason });
      },
      onLine: (line) => this.onLine(line),
      onOverlong: (head) => {
        this.counters.linesIn += 1;
        this.noise.add('overlong', head);
      },
      // The reader decides whether a quiet line is a silent board (effect board.silent, below).
      onSilent: () => {
        this.board.polling = false;
        this.dispatch({ kind: 'link.silent' });
      },
    });
  }

  start(): void {
    this.publishStatus();
    this.link.start();
    this.facts?.start();
  }

  /** A message from the payment worker. */
  handle(message: PaymentToMain): void {
    // Sent only between sessions (src/daemon/catalog-switch.ts): the next session denies by the new catalog.
    if (message.type === 'catalog.set') this.cfg = { ...this.cfg, ageDeniedItems: message.ageDeniedItems };
    if (message.type === 'fatal') this.log.error({ code: message.code }, `payment worker failed: ${message.message}`);
    if (this.stopping && message.type === 'session.begin') {
      this.safePost({ type: 'session.refused', txId: message.txId, reason: 'the reader is shutting down' });
      return;
    }
    this.dispatch({ kind: 'payment', message });
  }

  /**
   * Graceful stop: no new session; an open session is ended (C,STOP); a vend being dispensed may
   * finish (up to stopTimeoutMs), then whatever is left is failed cleanly and the reader disabled (C,0).
   */
  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  /** What the status LED follows (src/mdb/reader-view.ts); emitted as 'view' when it changes. */
  readerView(): ReaderView {
    const { status } = readerStatus(this.model);
    const kept = { held: this.model.held !== null, outOfService: this.model.outOfService };
    return { linkUp: this.link.isUp, ...this.board, status, ...kept };
  }

  stats(): MachineLoopStats {
    const { status, txId } = readerStatus(this.model);
    return {
      state: this.model.state.kind,
      status,
      txId,
      ...this.counters,
      noise: this.noise.snapshot(),
      link: this.link.stats(),
      vmc: this.watch.facts(),
    };
  }

  private async doStop(): Promise<void> {
    this.dispatch({ kind: 'shutdown' });
    await this.untilQuiescent(this.o.stopTimeoutMs ?? 15_000);
    this.dispatch({ kind: 'shutdown.force' });
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    if (this.holdTimer) clearTimeout(this.holdTimer);
    await this.facts?.stop();
    this.refusalLog.flush();
    await this.link.stop();
  }

  private untilQuiescent(timeoutMs: number): Promise<void> {
    if (isQuiescent(this.model) || !this.link.isUp) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.quiescentWaiters.push(done);
    });
  }

  private onLine(line: string): void {
    this.counters.linesIn += 1;
    const parsed = parseBoardLine(line);
    if (!parsed.ok) {
      this.noise.add(parsed.reason, line);
      return;
    }
    if (parsed.value.kind === 'ignored') {
      this.noise.addIgnored(parsed.value.what);
      return;
    }
    if (this.log.isLevelEnabled('trace')) this.log.trace({ line }, 'MDB <');
    if (parsed.value.kind === 'poll') this.watch.poll();
    this.board = { polling: this.board.polling || parsed.value.kind === 'poll', answering: true };
    this.dispatch({ kind: 'line', line: parsed.value });
  }

  // Inputs that arrive while effects are running (a post answered synchronously, a write that
  // fails at once) wait their turn, so every transition sees the model its predecessor left.
  private dispatch(input: ReaderInput): void {
    this.queue.push(input);
    if (this.dispatching) return;
    this.dispatching = true;
    try {
      for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
        const before = this.model.state;
        const { model, effects } = transition(this.model, next, this.cfg);
        this.model = model;
        for (const e of effects) this.run(e);
        this.publishStatus();
        this.publishView();
        // After the effects: the approval of a vend is already written when the watch looks.
        this.watch.observe(before, next.kind === 'line' ? next.line : null, model.state, effects);
      }
    } finally {
      this.dispatching = false;
    }
    this.checkResetLoop();
    if (this.quiescentWaiters.length > 0 && (isQuiescent(this.model) || !this.link.isUp)) {
      const waiters = this.quiescentWaiters;
      this.quiescentWaiters = [];
      for (const w of waiters) w();
    }
  }

  private run(e: ReaderEffect): void {
    switch (e.kind) {
      case 'send': {
        const line = encodeCommand(e.command, this.cfg.decimalPlaces);
        // Journaled just before the write: once the VMC has an approval, a restart that never hears
        // its result charges it (MDB 4.2 7.4.7, docs/decisions/sales-and-recovery.md). A link that
        // is down drops the line, so the VMC never gets that approval: nothing to journal.
        if (e.approval !== undefined && this.link.isUp) this.journalApproval(e.approval);
        if (!this.link.writeLine(line)) {
          this.counters.linesDropped += 1;
          return;
        }
        this.counters.linesOut += 1;
        if (this.log.isLevelEnabled('trace')) this.log.trace({ line }, 'MDB >');
        if (e.command.kind === 'enable' && e.command.enabled && !this.enableWritten) {
          this.enableWritten = true;
          const at = this.now();
          this.o.onEnableWritten?.(at);
          this.emit('enable-written', at);
        }
        return;
      }
      case 'post':
        if (e.message.type === 'cash.sale') this.counters.cashSales += 1;
        this.safePost(e.message);
        return;
      case 'timer.arm': {
        const old = this.timers.get(e.timer);
        if (old) clearTimeout(old);
        const t = setTimeout(() => {
          if (this.timers.get(e.timer) !== t) return;
          this.timers.delete(e.timer);
          this.dispatch({ kind: 'timeout', timer: e.timer });
        }, e.ms);
        this.timers.set(e.timer, t);
        return;
      }
      case 'timer.cancel': {
        const t = this.timers.get(e.timer);
        if (t) clearTimeout(t);
        this.timers.delete(e.timer);
        return;
      }
      case 'refused':
        this.counters.refused += 1;
        this.counters.lastRefusal = `${e.what}: ${e.reason}`;
        this.refusalLog.add({ what: e.what, reason: e.reason, state: this.model.state.kind });
        return;
      case 'link.restart':
        void this.restartLink(e.reason);
        return;
      case 'board.silent':
        this.emit('link', { up: false, silent: true, reason: e.reason });
        return;
      case 'config.refused': {
        const detail =
          `the board refused C,SETCONF,${e.key}=${e.value} (answer: ${e.answer}); the reader stays disabled. ` +
          'If the firmware names this key differently, set mdb.boardKeys (docs/mdb.md)';
        this.log.error(
          { event: 'mdb.config.refused', code: 'BOARD_CONFIG_REFUSED', key: e.key, value: e.value, answer: e.answer },
          `MDB: ${detail}`,
        );
        this.safePost({ type: 'fleet.observe', code: 'BOARD_CONFIG_REFUSED', active: true, detail });
        return;
      }
      case 'config.alias':
        this.log.warn(
          { event: 'mdb.config.alias', key: e.key, alias: e.alias, answer: e.answer },
          `MDB: the board refused C,SETCONF key ${e.key} (answer: ${e.answer}); ` +
            `trying its other spelling ${e.alias} (mdb.boardKeys names the key for good)`,
        );
        return;
      case 'config.done':
        this.safePost({ type: 'fleet.observe', code: 'BOARD_CONFIG_REFUSED', active: false, detail: null });
        return;
    }
  }

  /** A VMC that resets the reader over and over: hold the reader off its bus, longer each time. */
  private checkResetLoop(): void {
    if (this.stopping) return;
    const holdMs = this.watch.resetLoopHold();
    if (holdMs === null) return;
    const advice = this.watch.resetLoopAdvice();
    this.log.warn({ event: 'mdb.vmc.reset-loop', code: 'VMC_RESET_LOOP', holdMs }, `MDB: ${advice}`);
    this.safePost({ type: 'fleet.observe', code: 'VMC_RESET_LOOP', active: true, detail: advice });
    this.dispatch({ kind: 'hold', reason: 'VMC reset loop' });
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = setTimeout(() => {
      this.holdTimer = null;
      this.log.info({ event: 'mdb.vmc.reset-loop.release' }, 'MDB: reset-loop hold over, enabling the reader again');
      this.safePost({ type: 'fleet.observe', code: 'VMC_RESET_LOOP', active: false, detail: null });
      this.dispatch({ kind: 'hold', reason: null });
    }, holdMs);
    this.holdTimer.unref();
  }

  private async restartLink(reason: string): Promise<void> {
    this.boardUnheard();
    if (this.o.boardReset) {
      try {
        await this.o.boardReset.pulse();
        this.log.warn({ reason }, 'MDB: pulsed the board reset line');
      } catch (err) {
        this.log.error({ err: (err as Error).message }, 'MDB: board reset pulse failed');
      }
    }
    if (!this.stopping) this.link.restart(reason);
  }

  /** The journal never holds up an approval: a failure of its own is logged, the line still goes. */
  private journalApproval(approval: VendApproval): void {
    try {
      this.o.journalApproval?.(approval);
    } catch (err) {
      this.log.error({ err: (err as Error).message, txId: approval.txId }, 'MDB: the vend journal failed');
    }
  }

  private safePost(message: MainToPayment): void {
    try {
      this.o.post(message);
    } catch (err) {
      this.log.error({ err: (err as Error).message, type: message.type }, 'MDB: posting to the payment worker failed');
    }
  }

  /** Polls and answers not heard since now (a port opened or closed, a board taken for dead). */
  private boardUnheard(): void {
    this.board = { polling: false, answering: false };
    this.publishView();
  }

  private publishView(): void {
    const view = this.readerView();
    if (this.lastView !== null && sameReaderView(view, this.lastView)) return;
    this.emit('view', (this.lastView = view));
  }

  private publishStatus(): void {
    const now = readerStatus(this.model);
    if (this.lastStatus && this.lastStatus.status === now.status && this.lastStatus.txId === now.txId) return;
    this.lastStatus = now;
    this.safePost({ type: 'reader.status', status: now.status, txId: now.txId });
  }
}
