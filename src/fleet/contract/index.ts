/** The fleet link's contract: topics, payloads, alarm codes, command arguments (docs/decisions/fleet-link.md). */
export * from './topics.js';
export * from './alarms.js';
export * from './messages.js';
export * from './commands.js';
export * from './scopes.js';
export * from './updates.js';
export * from './audit.js';
export * from './catalog.js';
