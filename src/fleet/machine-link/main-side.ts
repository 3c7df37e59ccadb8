/**
 * The fleet link as the main thread sees it: it starts the fleet worker (which owns the MQTT
 * client) with a MessagePort to the payment worker, passes on what only the machine loop knows
 * (link down, board silent) as alarm observations, feeds `health` with the stats, and runs the
 * trial of a configuration changed from the fleet (config-change.ts). Nothing here touches the
 * network: a stalled broker stalls the fleet worker alone.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { QrvendConfig } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import { VERSION } from '../../core/version.js';
import type { FleetToMain, MainToFleet, MainToPayment, ThreadMemory } from '../../ipc/messages.js';
import { TOPIC_LEVEL } from '../contract/topics.js';
import { confirmChange, readPendingChange, readRolledBack, rollBack, type PendingChange } from './config-change.js';
import type { FleetWorkerData } from './worker.js';
import { updatesDir } from '../../updates/files.js';
import { publishUpdateEvent } from '../../updates/events.js';
import { watchReleaseTrial } from '../../updates/trial/agent-trial.js';

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
  const { config, log } = o;
  const machineId = config.fleet.machineId ?? o.terminalId;
  // The overlay (and its trial marks) exists only for an agent run with a site file.
  const overlayFile = o.configFile !== null ? config.fleet.configOverlay : null;
  const trial: PendingChange | null = overlayFile !== null ? readPendingChange(overlayFile) : null;
  const trialStartedAt = performance.now();
  let fleetConnected = false;
  let probeReturned = false;

  const rolledBack = overlayFile !== null ? readRolledBack(overlayFile) : null;
  if (rolledBack !== null) {
    o.toPayment({
      type: 'fleet.observe',
      code: 'CONFIG_ROLLED_BACK',
      active: true,
      detail: `a configuration change from the fleet was rolled back at ${rolledBack.at}: ${rolledBack.reason}`,
    });
  }
  // A new release's trial is judged by the root side (qrvend-release); the agent says when it is healthy.
  const release = watchReleaseTrial({
    version: VERSION,
    updatesDir: updatesDir(config),
    log,
    alarm: (active, detail) => o.toPayment({ type: 'fleet.observe', code: 'UPDATE_ROLLED_BACK', active, detail }),
    publish: (state, version, detail, rolloutId) =>
      publishUpdateEvent(o.toPayment, state, version, detail, { rolloutId }),
  });

  let worker: Worker | null = null;
  let fleetMemory: ThreadMemory | null = null;
  let paymentPort: MessagePort | null = null;
  let stopped: (() => void) | null = null;
  if (config.fleet.url !== null) {
    if (!TOPIC_LEVEL.test(machineId)) {
      log.error(
        { code: 'CONFIG_INVALID', machineId },
        'fleet link off: the TerminalId cannot be a topic level; set fleet.machineId (letters, digits, . _ : -)',
      );
    } else {
      const channel = new MessageChannel();
      paymentPort = channel.port1;
      const workerData: FleetWorkerData = {
        config,
        machineId,
        terminalId: o.terminalId,
        configFile: o.configFile,
        version: VERSION,
        startedAt: new Date().toISOString(),
        paymentPort: channel.port2,
        probe: trial !== null || release.inTrial,
      };
      worker = new Worker(new URL('./worker.js', import.meta.url), {
        workerData,
        transferList: [channel.port2],
        resourceLimits: FLEET_WORKER_LIMITS,
      });
      worker.on('message', (message: FleetToMain) => {
        if (message.type === 'fleet.restart') o.restart(message.reason);
        else if (message.type === 'fleet.link') fleetConnected = message.connected;
        else if (message.type === 'fleet.probe.returned') probeReturned = true;
        else if (message.type === 'update.ready') o.onUpdateReady?.(message.version, message.rolloutId);
        else if (message.type === 'fleet.memory') fleetMemory = message.memory;
        else if (message.type === 'stopped') stopped?.();
      });
      // The fleet link is not on the vend path: a failure ends the link, never the payments.
      worker.on('error', (err) =>
        log.error({ err, code: 'INTERNAL' }, 'fleet worker crashed: the fleet link is off until the next restart'),
      );
      worker.on('exit', () => {
        worker = null;
        fleetConnected = false;
        stopped?.();
      });
    }
  }
  const post = (message: MainToFleet) => worker?.postMessage(message);
  let trialOver = trial === null;

  return {
    paymentPort,
    machineId,
    inTrial: trial !== null || release.inTrial,
    onLink(change) {
      o.toPayment({
        type: 'fleet.observe',
        code: 'READER_OFFLINE',
        active: !change.up && !change.silent,
        detail: change.reason,
      });
      o.toPayment({
        type: 'fleet.observe',
        code: 'BOARD_SILENT',
        active: change.silent,
        detail: change.silent ? change.reason : null,
      });
    },
    stats(stats) {
      post({ type: 'fleet.stats', stats });
    },
    memory: () => (worker === null ? null : fleetMemory),
    checkTrial(h) {
      // With the fleet link on, the fleet must still be able to reach the machine on the change.
      const healthy = h.paymentReady && h.readerUp && (config.fleet.url === null || (fleetConnected && probeReturned));
      if (healthy) release.healthy();
      if (trialOver || trial === null || overlayFile === null) return;
      if (healthy) {
        trialOver = true;
        confirmChange(overlayFile);
        o.toPayment({ type: 'fleet.observe', code: 'CONFIG_ROLLED_BACK', active: false, detail: null });
        log.info({ event: 'fleet.config.confirmed' }, 'configuration changed from the fleet is healthy: kept');
        return;
      }
      if (performance.now() - trialStartedAt < trial.healthyWithinS * 1000) return;
      trialOver = true;
      const why =
        `not healthy within ${trial.healthyWithinS} s (payment side ` +
        `${h.paymentReady ? 'ready' : 'not ready'}, reader ${h.readerUp ? 'up' : 'not up'}, fleet link ` +
        `${fleetConnected ? 'up' : 'down'}, own command topic round trip ${probeReturned ? 'done' : 'not done'})`;
      const restored = rollBack(overlayFile, why, new Date());
      log.error(
        { event: 'fleet.config.rolled-back', code: 'CONFIG_ROLLED_BACK', restored },
        `configuration changed from the fleet was ${why}: previous fleet overlay restored, restarting`,
      );
      o.restart('configuration rolled back');
    },
    async stop() {
      const w = worker;
      if (w === null) return;
      const done = new Promise<void>((resolve) => (stopped = resolve));
      w.postMessage({ type: 'shutdown' } satisfies MainToFleet);
      await Promise.race([done, new Promise((r) => setTimeout(r, STOP_TIMEOUT_MS).unref())]);
      await w.terminate();
    },
  };
}
