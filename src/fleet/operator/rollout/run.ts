/**
 * Drives a staged rollout over the broker: offers each batch with signed `update.offer` commands,
 * follows the machines' `update` events and retained statuses, and applies plan.ts's decisions
 * until the rollout is complete, stopped on failures, or interrupted. The state is written to the
 * rollout file before each offer leaves and after every change, so a resume loses nothing: the
 * outcomes reached while the operator was away are in the machines' retained statuses, which the
 * broker hands over again at subscription.
 */
import type { MqttClient } from 'mqtt';
import { isQrvendError, ErrorCodes } from '../../../core/errors.js';
import { fleetFilters, type UpdateState } from '../../contract/index.js';
import { sendFleetCommand, type CommandSigner } from '../command.js';
import { decodeFleetMessage } from '../decode.js';
import {
  endRollout,
  markOffered,
  nextStep,
  recordReport,
  recordTimeouts,
  startBatch,
  type RolloutState,
  type Step,
} from './plan.js';
import { writeRolloutFile } from './state-file.js';

export type RolloutRecord =
  | { type: 'batch'; index: number; machineIds: string[]; resent: boolean }
  | {
      type: 'state';
      machineId: string;
      state: UpdateState | 'timed-out' | 'no-reply';
      detail: string | null;
      progress: { bytes: number; size: number } | null;
    }
  | { type: 'end'; how: 'complete' | 'stopped' | 'interrupted'; reason: string; inFlight: string[] };

export interface RolloutRunOptions {
  client: MqttClient;
  protocol: 4 | 5;
  prefix: string;
  file: string;
  signer: CommandSigner;
  /** How long to wait for a machine's reply to the offer (its outcome comes later, by events). */
  replyTimeoutMs: number;
  /** Offers in flight at once. */
  concurrency?: number;
  report(record: RolloutRecord): void;
  /** True once the operator asked to stop (Ctrl-C): the state is saved and the run returns. */
  interrupted(): boolean;
}

export async function runRollout(
  initial: RolloutState,
  o: RolloutRunOptions,
): Promise<{ state: RolloutState; how: 'complete' | 'stopped' | 'interrupted' }> {
  return new RolloutDriver(initial, o).run();
}

type StateRecord = Extract<RolloutRecord, { type: 'state' }>;
type RunOutcome = { state: RolloutState; how: 'complete' | 'stopped' | 'interrupted' };

/** One run of a rollout: the state as it moves, and what was shown of each machine. */
class RolloutDriver {
  private state: RolloutState;
  private dirty = false;
  private readonly version: string;
  private readonly shown = new Map<string, { state: string; bytes: number | null }>();
  private readonly o: RolloutRunOptions;

  constructor(initial: RolloutState, o: RolloutRunOptions) {
    this.state = initial;
    this.version = initial.manifest.version;
    this.o = o;
  }

  async run(): Promise<RunOutcome> {
    this.o.client.on('message', this.onMessage);
    const filters = fleetFilters(this.o.prefix);
    try {
      await this.o.client.subscribeAsync({ [filters.events]: { qos: 1 }, [filters.status]: { qos: 1 } });
      return await this.loop();
    } finally {
      this.o.client.off('message', this.onMessage);
      await this.o.client.unsubscribeAsync([filters.events, filters.status]).catch(() => undefined);
    }
  }

  private async loop(): Promise<RunOutcome> {
    // A resumed batch gets a whole timeout again: no monotonic instant survives the interruption.
    let batchStarted = performance.now();
    for (;;) {
      if (this.o.interrupted()) {
        this.save();
        this.o.report({
          type: 'end',
          how: 'interrupted',
          reason: 'interrupted by the operator',
          inFlight: this.inFlight(),
        });
        return { state: this.state, how: 'interrupted' };
      }
      const step = nextStep(this.state, performance.now() - batchStarted);
      if (step.kind === 'offer') {
        const resent = this.state.batches.some((b) => b.index === step.index);
        this.state = startBatch(this.state, step.index, step.machineIds, new Date().toISOString());
        this.save();
        this.o.report({ type: 'batch', index: step.index, machineIds: step.machineIds, resent });
        batchStarted = performance.now();
        await this.offerAll(step.machineIds);
        this.save();
      } else if (step.kind === 'wait') {
        if (this.dirty) this.save();
        await new Promise((r) => setTimeout(r, 100));
      } else if (step.kind === 'time-out') {
        this.timeOut(step.machineIds);
      } else {
        return this.end(step);
      }
    }
  }

  private timeOut(machineIds: string[]): void {
    this.state = recordTimeouts(this.state, machineIds, this.state.policy.batchTimeoutMs);
    for (const machineId of machineIds) {
      this.show({
        type: 'state',
        machineId,
        state: 'timed-out',
        detail: this.state.targets.find((t) => t.machineId === machineId)?.detail ?? null,
        progress: null,
      });
    }
    this.save();
  }

  private end(step: Extract<Step, { kind: 'complete' | 'stop' }>): {
    state: RolloutState;
    how: 'complete' | 'stopped';
  } {
    this.state = endRollout(
      this.state,
      step.kind === 'complete' ? 'complete' : 'stopped',
      step.reason,
      new Date().toISOString(),
    );
    this.save();
    this.o.report({ type: 'end', how: this.state.ended!.how, reason: step.reason, inFlight: this.inFlight() });
    return { state: this.state, how: this.state.ended!.how };
  }

  /** The machines offered the release whose outcome has not come yet. */
  private inFlight(): string[] {
    return this.state.targets.filter((t) => t.phase !== 'pending' && t.outcome === null).map((t) => t.machineId);
  }

  // A state is shown once per machine, whether its event or its retained status
  // says it first; download progress each time it moves.
  private show(record: StateRecord): void {
    const last = this.shown.get(record.machineId);
    if (
      last !== undefined &&
      last.state === record.state &&
      (record.progress === null || record.progress.bytes === last.bytes)
    )
      return;
    this.shown.set(record.machineId, { state: record.state, bytes: record.progress?.bytes ?? last?.bytes ?? null });
    this.o.report(record);
  }

  private take(
    machineId: string,
    reported: UpdateState,
    detail: string | null,
    progress: { bytes: number; size: number } | null,
  ): void {
    const target = this.state.targets.find((t) => t.machineId === machineId);
    if (target === undefined || target.phase === 'pending' || target.outcome !== null) return;
    this.state = recordReport(this.state, machineId, reported, detail);
    this.dirty = true;
    this.show({ type: 'state', machineId, state: reported, detail, progress });
  }

  private readonly onMessage = (topic: string, payload: Buffer): void => {
    const decoded = decodeFleetMessage(this.o.prefix, topic, payload);
    if (decoded.kind === 'event' && decoded.event.kind === 'update') {
      const e = decoded.event;
      if (e.rolloutId === this.state.rolloutId && e.version === this.version)
        this.take(decoded.machineId, e.state, e.detail, e.progress);
    } else if (decoded.kind === 'status' && decoded.status.online) {
      const u = decoded.status.update;
      if (u !== undefined && u.rolloutId === this.state.rolloutId && u.version === this.version)
        this.take(decoded.machineId, u.state, null, null);
    }
  };

  private save(): void {
    writeRolloutFile(this.o.file, this.state);
    this.dirty = false;
  }

  private async offerAll(machineIds: string[]): Promise<void> {
    const queue = [...machineIds];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        if (this.o.interrupted()) return;
        await this.offerOne(id);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.concurrency ?? 16, machineIds.length) }, worker));
  }

  private async offerOne(machineId: string): Promise<void> {
    const args = { manifest: this.state.manifest, url: this.state.url, rolloutId: this.state.rolloutId };
    try {
      const { reply } = await sendFleetCommand(this.o.client, {
        prefix: this.o.prefix,
        machineId,
        name: 'update.offer',
        args,
        timeoutMs: this.o.replyTimeoutMs,
        protocol: this.o.protocol,
        signer: this.o.signer,
      });
      this.state = markOffered(this.state, machineId);
      // An error reply is the machine refusing the offer (unsigned, wrong key, bad manifest...): a failure.
      if (!reply.ok) this.take(machineId, 'refused', `${reply.error.code}: ${reply.error.message}`.slice(0, 512), null);
    } catch (err) {
      if (!isQrvendError(err, ErrorCodes.FLEET_NO_REPLY)) throw err;
      // The offer may have arrived all the same: its outcome can still come as events, until the batch timeout.
      this.state = markOffered(this.state, machineId);
      this.show({
        type: 'state',
        machineId,
        state: 'no-reply',
        detail: `no reply to the offer within ${this.o.replyTimeoutMs} ms; waiting for its update events`,
        progress: null,
      });
    }
    this.dirty = true;
  }
}
