/**
 * The fleet link as the main thread sees it: it starts the fleet worker (which owns the MQTT
 * client) with a MessagePort to the payment worker, passes on what only the machine loop knows
 * (link down, board silent) as alarm observations, feeds `health` with the stats, and runs the
 * trial of a configuration changed from the fleet (config-change.ts). Nothing here touches the
 * network: a stalled broker stalls the fleet worker alone.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { QrvendConfig } from '../../config/schema.js';
import { logFileOf, type Logger } from '../../core/log.js';
import { VERSION } from '../../core/version.js';
import type { FleetToMain, MainToFleet, MainToPayment, ThreadMemory } from '../../ipc/messages.js';
import { TOPIC_LEVEL } from '../contract/topics.js';
import { confirmChange, readPendingChange, readRolledBack, rollBack, type PendingChange } from './config-change.js';
import type { FleetWorkerData } from './worker.js';
import { updatesDir } from '../../updates/files.js';
import { publishUpdateEvent } from '../../updates/events.js';
import { watchReleaseTrial, type ReleaseTrialWatch } from '../../updates/trial/agent-trial.js';

/**
 * The fleet worker's heap caps (see src/daemon/heap-limits.ts for why caps): mqtt, the contract's
 * schemas, the trust keyring and the update agent, 13-14 MB live (its line in the stats line).
 * Young generation 3 MB = 1 MB semi-spaces, as the other workers: the link is not on the vend path,
 * and a few more scavenges in a command flood cost it nothing.
 */
const FLEET_WORKER_LIMITS = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 3 };
const STOP_TIMEOUT_MS = 5_000;

export interface FleetMainOptions {
  config: QrvendConfig;
  terminalId: string;
  configFile: string | null;
  log: Logger;
  toPayment(message: MainToPayment): void;
  /** Restart the agent (exit with RESTART_EXIT_CODE). */
  restart(reason: string): void;
  /** An update is downloaded and verified: activate it at the next idle moment (src/updates/activation-runner.ts). */
  onUpdateReady?(version: string, rolloutId: string | null): void;
}

export interface FleetMain {
  /** The payment worker's end of the channel (transfer it in its workerData). */
  readonly paymentPort: MessagePort | null;
  readonly machineId: string;
  /** This start is the trial of a configuration changed from the fleet or of a new release (checkTrial decides). */
  readonly inTrial: boolean;
  /** The machine loop's link changed. */
  onLink(change: { up: boolean; silent: boolean; reason: string | null }): void;
  stats(stats: Record<string, unknown>): void;
  /** The fleet worker's heap as it answered the last `stats` (null without the link or before the first answer). */
  memory(): ThreadMemory | null;
  /**
   * Called once a second with what "healthy" needs; confirms or rolls back a trial config, confirms a trial release.
   */
  checkTrial(healthy: { paymentReady: boolean; readerUp: boolean }): void;
  stop(): Promise<void>;
}

export function startFleetLink(o: FleetMainOptions): FleetMain {
  return new FleetLink(o);
}

/** The main thread's end of the fleet link: its fields hold what the fleet worker last said and the trial's state. */
class FleetLink implements FleetMain {
  readonly paymentPort: MessagePort | null = null;
  readonly machineId: string;
  readonly inTrial: boolean;
  private readonly o: FleetMainOptions;
  private readonly overlayFile: string | null;
  private readonly trial: PendingChange | null;
  private readonly trialStartedAt: number;
  private readonly release: ReleaseTrialWatch;
  private fleetConnected = false;
  private probeReturned = false;
  private worker: Worker | null = null;
  private fleetMemory: ThreadMemory | null = null;
  private stopped: (() => void) | null = null;
  private trialOver: boolean;

  constructor(o: FleetMainOptions) {
    const { config, log } = o;
    this.o = o;
    this.machineId = config.fleet.machineId ?? o.terminalId;
    // The overlay (and its trial marks) exists only for an agent run with a site file.
    this.overlayFile = o.configFile !== null ? config.fleet.configOverlay : null;
    this.trial = this.overlayFile !== null ? readPendingChange(this.overlayFile) : null;
    this.trialStartedAt = performance.now();

    const rolledBack = this.overlayFile !== null ? readRolledBack(this.overlayFile) : null;
    if (rolledBack !== null) {
      o.toPayment({
        type: 'fleet.observe',
        code: 'CONFIG_ROLLED_BACK',
        active: true,
        detail: `a configuration change from the fleet was rolled back at ${rolledBack.at}: ${rolledBack.reason}`,
      });
    }
    // A new release's trial is judged by the root side (qrvend-release); the agent says when it is healthy.
    this.release = watchReleaseTrial({
      version: VERSION,
      updatesDir: updatesDir(config),
      log,
      alarm: (active, detail) => o.toPayment({ type: 'fleet.observe', code: 'UPDATE_ROLLED_BACK', active, detail }),
      publish: (state, version, detail, rolloutId) =>
        publishUpdateEvent(o.toPayment, state, version, detail, { rolloutId }),
    });
    if (config.fleet.url !== null) this.paymentPort = this.startWorker();
    this.trialOver = this.trial === null;
    this.inTrial = this.trial !== null || this.release.inTrial;
  }

  /** Starts the fleet worker; returns the payment worker's end of their channel (null: the link stays off). */
  private startWorker(): MessagePort | null {
    const { config, log } = this.o;
    if (!TOPIC_LEVEL.test(this.machineId)) {
      log.error(
        { code: 'CONFIG_INVALID', machineId: this.machineId },
        'fleet link off: the TerminalId cannot be a topic level; set fleet.machineId (letters, digits, . _ : -)',
      );
      return null;
    }
    const channel = new MessageChannel();
    const workerData: FleetWorkerData = {
      config,
      machineId: this.machineId,
      terminalId: this.o.terminalId,
      configFile: this.o.configFile,
      version: VERSION,
      startedAt: new Date().toISOString(),
      paymentPort: channel.port2,
      probe: this.trial !== null || this.release.inTrial,
      logFile: logFileOf(log),
    };
    const worker = new Worker(new URL('./worker.js', import.meta.url), {
      workerData,
      transferList: [channel.port2],
      resourceLimits: FLEET_WORKER_LIMITS,
    });
    this.worker = worker;
    worker.on('message', (message: FleetToMain) => this.fromWorker(message));
    // The fleet link is not on the vend path: a failure ends the link, never the payments.
    worker.on('error', (err) =>
      log.error({ err, code: 'INTERNAL' }, 'fleet worker crashed: the fleet link is off until the next restart'),
    );
    worker.on('exit', () => {
      this.worker = null;
      this.fleetConnected = false;
      this.stopped?.();
    });
    return channel.port1;
  }

  private fromWorker(message: FleetToMain): void {
    if (message.type === 'fleet.restart') this.o.restart(message.reason);
    else if (message.type === 'fleet.link') this.fleetConnected = message.connected;
    else if (message.type === 'fleet.probe.returned') this.probeReturned = true;
    else if (message.type === 'update.ready') this.o.onUpdateReady?.(message.version, message.rolloutId);
    else if (message.type === 'fleet.memory') this.fleetMemory = message.memory;
    else if (message.type === 'stopped') this.stopped?.();
  }

  private post(message: MainToFleet): void {
    this.worker?.postMessage(message);
  }

  onLink(change: { up: boolean; silent: boolean; reason: string | null }): void {
    this.o.toPayment({
      type: 'fleet.observe',
      code: 'READER_OFFLINE',
      active: !change.up && !change.silent,
      detail: change.reason,
    });
    this.o.toPayment({
      type: 'fleet.observe',
      code: 'BOARD_SILENT',
      active: change.silent,
      detail: change.silent ? change.reason : null,
    });
  }

  stats(stats: Record<string, unknown>): void {
    this.post({ type: 'fleet.stats', stats });
  }

  memory(): ThreadMemory | null {
    return this.worker === null ? null : this.fleetMemory;
  }

  checkTrial(h: { paymentReady: boolean; readerUp: boolean }): void {
    const { config, log } = this.o;
    const { trial, overlayFile, fleetConnected, probeReturned } = this;
    // With the fleet link on, the fleet must still be able to reach the machine on the change.
    const healthy = h.paymentReady && h.readerUp && (config.fleet.url === null || (fleetConnected && probeReturned));
    if (healthy) this.release.healthy();
    if (this.trialOver || trial === null || overlayFile === null) return;
    if (healthy) {
      this.trialOver = true;
      confirmChange(overlayFile);
      this.o.toPayment({ type: 'fleet.observe', code: 'CONFIG_ROLLED_BACK', active: false, detail: null });
      log.info({ event: 'fleet.config.confirmed' }, 'configuration changed from the fleet is healthy: kept');
      return;
    }
    if (performance.now() - this.trialStartedAt < trial.healthyWithinS * 1000) return;
    this.trialOver = true;
    const why =
      `not healthy within ${trial.healthyWithinS} s (payment side ` +
      `${h.paymentReady ? 'ready' : 'not ready'}, reader ${h.readerUp ? 'up' : 'not up'}, fleet link ` +
      `${fleetConnected ? 'up' : 'down'}, own command topic round trip ${probeReturned ? 'done' : 'not done'})`;
    const restored = rollBack(overlayFile, why, new Date());
    log.error(
      { event: 'fleet.config.rolled-back', code: 'CONFIG_ROLLED_BACK', restored },
      `configuration changed from the fleet was ${why}: previous fleet overlay restored, restarting`,
    );
    this.o.restart('configuration rolled back');
  }

  async stop(): Promise<void> {
    const w = this.worker;
    if (w === null) return;
    const done = new Promise<void>((resolve) => (this.stopped = resolve));
    w.postMessage({ type: 'shutdown' } satisfies MainToFleet);
    await Promise.race([done, new Promise((r) => setTimeout(r, STOP_TIMEOUT_MS).unref())]);
    await w.terminate();
  }
}
