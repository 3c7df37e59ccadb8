/**
 * Remote updates over the fleet link (docs/decisions/remote-updates.md, docs/updates.md): the `update.offer`
 * command's arguments and the `update` events a machine publishes as an update goes through its
 * states. Part of the contract between the device and `qrvend fleet update`.
 */
import { z } from 'zod';
import { UpdateManifest } from './manifest-schema.js';
import { ROLLOUT_ID } from './rollout-id.js';

/** `cmd/update.offer` (scope `update`): the signed manifest and where to fetch its artifact. */
export const UpdateOfferArgs = z.strictObject({
  manifest: UpdateManifest,
  /** https:// only (the same TLS rules as the gateway); plain http:// only to a loopback host (tests). */
  url: z.string().min(8).max(2048),
  /** Rollout this offer belongs to (`qrvend fleet update`), echoed in every update event. */
  rolloutId: z.string().regex(ROLLOUT_ID).optional(),
});
export type UpdateOfferArgs = z.infer<typeof UpdateOfferArgs>;

/**
 * The states an update goes through on a machine, in order; `refused`, `failed` and `rolled-back`
 * end it. `waiting` = downloaded and verified, activation waits for the machine to be idle.
 */
export const UPDATE_STATES = [
  'offered',
  'refused',
  'downloading',
  'verified',
  'waiting',
  'activating',
  'trial',
  'healthy',
  'failed',
  'rolled-back',
] as const;
export type UpdateState = (typeof UPDATE_STATES)[number];

export const UpdateEvent = z.object({
  kind: z.literal('update'),
  eventId: z.string().min(1).max(128),
  at: z.string().max(40),
  machineId: z.string().min(1).max(128),
  /** The version on offer (for `healthy` and `rolled-back`, the version that was on trial). */
  version: z.string().max(64),
  /** The version running when the event was sent. */
  running: z.string().max(64),
  state: z.enum(UPDATE_STATES),
  rolloutId: z.string().max(64).nullable(),
  /** Bytes of the artifact on disk / its size, while downloading. */
  progress: z.object({ bytes: z.number().int().min(0), size: z.number().int().min(0) }).nullable(),
  /** Why it was refused, failed or rolled back, or what it waits for; never a secret. */
  detail: z.string().max(512).nullable(),
});
export type UpdateEvent = z.infer<typeof UpdateEvent>;

/** What the retained status says of updates (`qrvend fleet status`). */
export const UpdateStatus = z.object({
  state: z.enum(UPDATE_STATES),
  version: z.string().max(64),
  rolloutId: z.string().max(64).nullable(),
  at: z.string().max(40),
});
export type UpdateStatus = z.infer<typeof UpdateStatus>;
