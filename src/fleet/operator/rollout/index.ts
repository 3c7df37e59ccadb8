/** `qrvend fleet update`: the staged rollout of a signed release (docs/updates.md). */
export * from './plan.js';
export * from './inputs.js';
export * from './state-file.js';
export * from './run.js';
export * from './report.js';
