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
  let state = initial;
  let dirty = false;
  const version = state.manifest.version;
  const shown = new Map<string, { state: string; bytes: number | null }>();
  // A state is shown once per machine, whether its event or its retained status
  // says it first; download progress each time it moves.
  const show = (record: Extract<RolloutRecord, { type: 'state' }>) => {
    const last = shown.get(record.machineId);
    if (
      last !== undefined &&
      last.state === record.state &&
      (record.progress === null || record.progress.bytes === last.bytes)
    )
      return;
    shown.set(record.machineId, { state: record.state, bytes: record.progress?.bytes ?? last?.bytes ?? null });
    o.report(record);
  };
  const take = (
    machineId: string,
    reported: UpdateState,
    detail: string | null,
    progress: { bytes: number; size: number } | null,
  ) => {
    const target = state.targets.find((t) => t.machineId === machineId);
    if (target === undefined || target.phase === 'pending' || target.outcome !== null) return;
    state = recordReport(state, machineId, reported, detail);
    dirty = true;
    show({ type: 'state', machineId, state: reported, detail, progress });
  };
  const onMessage = (topic: string, payload: Buffer) => {
    const decoded = decodeFleetMessage(o.prefix, topic, payload);
    if (decoded.kind === 'event' && decoded.event.kind === 'update') {
      const e = decoded.event;
      if (e.rolloutId === state.rolloutId && e.version === version)
        take(decoded.machineId, e.state, e.detail, e.progress);
    } else if (decoded.kind === 'status' && decoded.status.online) {
      const u = decoded.status.update;
      if (u !== undefined && u.rolloutId === state.rolloutId && u.version === version)
        take(decoded.machineId, u.state, null, null);
    }
  };
  const save = () => {
    writeRolloutFile(o.file, state);
    dirty = false;
  };

  o.client.on('message', onMessage);
  const filters = fleetFilters(o.prefix);
  try {
    await o.client.subscribeAsync({ [filters.events]: { qos: 1 }, [filters.status]: { qos: 1 } });
    // A resumed batch gets a whole timeout again: no monotonic instant survives the interruption.
    let batchStarted = performance.now();
    for (;;) {
      if (o.interrupted()) {
        save();
        const inFlight = state.targets
          .filter((t) => t.phase !== 'pending' && t.outcome === null)
          .map((t) => t.machineId);
        o.report({ type: 'end', how: 'interrupted', reason: 'interrupted by the operator', inFlight });
        return { state, how: 'interrupted' };
      }
      const step = nextStep(state, performance.now() - batchStarted);
      if (step.kind === 'offer') {
        const resent = state.batches.some((b) => b.index === step.index);
        state = startBatch(state, step.index, step.machineIds, new Date().toISOString());
        save();
        o.report({ type: 'batch', index: step.index, machineIds: step.machineIds, resent });
        batchStarted = performance.now();
        await offerAll(step.machineIds);
        save();
      } else if (step.kind === 'wait') {
        if (dirty) save();
        await new Promise((r) => setTimeout(r, 100));
      } else if (step.kind === 'time-out') {
        state = recordTimeouts(state, step.machineIds, state.policy.batchTimeoutMs);
        for (const machineId of step.machineIds) {
          show({
            type: 'state',
            machineId,
            state: 'timed-out',
            detail: state.targets.find((t) => t.machineId === machineId)?.detail ?? null,
            progress: null,
          });
        }
        save();
      } else {
        state = endRollout(
          state,
          step.kind === 'complete' ? 'complete' : 'stopped',
          step.reason,
          new Date().toISOString(),
        );
        save();
        const inFlight = state.targets
          .filter((t) => t.phase !== 'pending' && t.outcome === null)
          .map((t) => t.machineId);
        o.report({ type: 'end', how: state.ended!.how, reason: step.reason, inFlight });
        return { state, how: state.ended!.how };
      }
    }
  } finally {
    o.client.off('message', onMessage);
    await o.client.unsubscribeAsync([filters.events, filters.status]).catch(() => undefined);
  }

  async function offerAll(machineIds: string[]): Promise<void> {
    const queue = [...machineIds];
    const worker = async () => {
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        if (o.interrupted()) return;
        await offerOne(id);
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.concurrency ?? 16, machineIds.length) }, worker));
  }

  async function offerOne(machineId: string): Promise<void> {
    const args = { manifest: state.manifest, url: state.url, rolloutId: state.rolloutId };
    try {
      const { reply } = await sendFleetCommand(o.client, {
        prefix: o.prefix,
        machineId,
        name: 'update.offer',
        args,
        timeoutMs: o.replyTimeoutMs,
        protocol: o.protocol,
        signer: o.signer,
      });
      state = markOffered(state, machineId);
      // An error reply is the machine refusing the offer (unsigned, wrong key, bad manifest...): a failure.
      if (!reply.ok) take(machineId, 'refused', `${reply.error.code}: ${reply.error.message}`.slice(0, 512), null);
    } catch (err) {
      if (!isQrvendError(err, ErrorCodes.FLEET_NO_REPLY)) throw err;
      // The offer may have arrived all the same: its outcome can still come as events, until the batch timeout.
      state = markOffered(state, machineId);
      show({
        type: 'state',
        machineId,
        state: 'no-reply',
        detail: `no reply to the offer within ${o.replyTimeoutMs} ms; waiting for its update events`,
        progress: null,
      });
    }
    dirty = true;
  }
}
