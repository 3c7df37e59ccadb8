/**
 * Runs the activation waiter (activation.ts) on the main thread, which knows the reader; the
 * payment worker knows sessions, payments and deliveries and holds the Start endpoint
 * (`update.hold` / `update.activity`, src/ipc/messages.ts). Requests come from the fleet worker
 * (a verified update) and from `<updates.dir>/restart.json` (a hand-installed package asks for its
 * restart instead of restarting the unit). On activation: activate.json (an update) is written
 * durably, or restart.json removed, and the agent exits with RESTART_EXIT_CODE.
 */
import { existsSync } from 'node:fs';
import { removeDurably } from '../core/durable-file.js';
import type { MainToPayment } from '../ipc/messages.js';
import {
  initialActivation,
  stepActivation,
  type ActivationEffect,
  type ActivationEvent,
  type ActivationRequest,
  type ActivationState,
} from './activation.js';
import { readSmallJson, updateFiles, writeActivationRequest } from './files.js';
import { publishUpdateEvent } from './events.js';

const TICK_MS = 1_000;
const HOLD_TIMEOUT_MS = 10_000;
/** After an activation request that could not be written (a full or read-only disk), the next try waits this long. */
const RETRY_AFTER_FAILURE_MS = 60_000;

export interface ActivationRunnerOptions {
  dir: string;
  maxDeferralMs: number;
  /** What the machine loop has in flight (a session, a vend), or null. */
  readerBusy(): string | null;
  toPayment(message: MainToPayment): void;
  /** Exit with RESTART_EXIT_CODE. */
  restart(reason: string): void;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void; error(o: object, m: string): void };
  monotonicNow(): number;
}

export interface ActivationRunner {
  request(request: ActivationRequest): void;
  /** The payment worker's answer to update.hold. */
  activity(busy: string | null, held: boolean): void;
  stop(): void;
}

export function startActivationRunner(o: ActivationRunnerOptions): ActivationRunner {
  return new MainThreadActivation(o);
}

/** The waiter's state on the main thread, its one-second tick, and what its effects do. */
class MainThreadActivation implements ActivationRunner {
  private readonly files: ReturnType<typeof updateFiles>;
  private state: ActivationState = initialActivation;
  private pausedUntil = -Infinity;
  private readonly limits: { maxDeferralMs: number; holdTimeoutMs: number };
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly o: ActivationRunnerOptions) {
    this.files = updateFiles(o.dir);
    this.limits = { maxDeferralMs: o.maxDeferralMs, holdTimeoutMs: HOLD_TIMEOUT_MS };
    // A deferral raised before the last restart is over: this run starts without a pending activation.
    o.toPayment({ type: 'fleet.observe', code: 'UPDATE_DEFERRED', active: false, detail: null });
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  request(request: ActivationRequest): void {
    this.feed({ type: 'request', request, nowMs: this.o.monotonicNow() });
  }

  activity(busy: string | null, held: boolean): void {
    if (this.state.phase !== 'waiting' && this.state.phase !== 'holding') return;
    this.feed({ type: 'facts', busy: this.o.readerBusy() ?? busy, held, nowMs: this.o.monotonicNow() });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private feed(event: ActivationEvent): void {
    const step = stepActivation(this.state, event, this.limits);
    this.state = step.state;
    for (const effect of step.effects) this.apply(effect);
  }

  private apply(effect: ActivationEffect): void {
    const o = this.o;
    switch (effect.type) {
      case 'hold':
        o.toPayment({ type: 'update.hold', hold: effect.hold });
        return;
      case 'deferred':
        if (effect.active)
          o.log.warn({ event: 'update.deferred', code: 'UPDATE_DEFERRED' }, effect.detail ?? 'activation deferred');
        o.toPayment({ type: 'fleet.observe', code: 'UPDATE_DEFERRED', active: effect.active, detail: effect.detail });
        return;
      case 'activate':
        this.activate(effect.request);
        return;
    }
  }

  private activate(request: ActivationRequest): void {
    const o = this.o;
    try {
      if (request.kind === 'update') {
        writeActivationRequest(o.dir, request, new Date());
        publishUpdateEvent(o.toPayment, 'activating', request.version, null, { rolloutId: request.rolloutId });
      }
      removeDurably(this.files.restart);
    } catch (err) {
      // Nothing switched: let sessions go again and try at the next idle moment.
      o.log.error(
        { err: (err as Error).message, dir: o.dir },
        'the activation request could not be written; sessions go on',
      );
      o.toPayment({ type: 'update.hold', hold: false });
      this.state = {
        phase: 'waiting',
        request,
        sinceMs: o.monotonicNow(),
        deferred: false,
        waitingFor: 'the activation request could not be written',
      };
      this.pausedUntil = o.monotonicNow() + RETRY_AFTER_FAILURE_MS;
      return;
    }
    o.log.info(
      { event: 'update.activate', kind: request.kind, version: request.version },
      request.kind === 'update'
        ? `machine idle, sessions held: activating ${request.version} (restart)`
        : 'machine idle, sessions held: restarting for the installed package',
    );
    o.restart(
      request.kind === 'update' ? `activating update ${request.version}` : 'restart requested by the installed package',
    );
  }

  /** Each second: a hand-installed package's restart request, then the waiter's tick while it waits. */
  private tick(): void {
    const o = this.o;
    const now = o.monotonicNow();
    if (existsSync(this.files.restart)) {
      const asked = readSmallJson(this.files.restart) as { version?: unknown } | null;
      const version = typeof asked?.version === 'string' ? asked.version.slice(0, 64) : 'unknown';
      if (this.state.phase === 'none')
        o.log.info(
          { event: 'update.restart-requested', version },
          'the installed package asks for a restart: at the next idle moment',
        );
      if (this.state.phase === 'none' || (this.state.phase !== 'activating' && this.state.request.kind !== 'update'))
        this.feed({ type: 'request', request: { kind: 'restart', version, rolloutId: null }, nowMs: now });
    }
    if ((this.state.phase === 'waiting' || this.state.phase === 'holding') && now >= this.pausedUntil) {
      o.toPayment({ type: 'update.hold', hold: this.state.phase === 'holding' });
      this.feed({ type: 'tick', nowMs: now });
    }
  }
}
