/**
 * What a rollout id may be: `qrvend fleet update` names a rollout, `update.offer` carries the name,
 * and every update event a machine publishes echoes it. Its own module, without zod, because the
 * daemon's main thread reads it back from the update agent's state (src/updates/files.ts) and does
 * not load zod (BENCHMARKS.md, memory).
 */
export const ROLLOUT_ID = /^[A-Za-z0-9._:-]{1,64}$/;
