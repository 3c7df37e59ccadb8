/** The Static QR Start endpoint (payment worker). Import from here. */
export { startStartEndpoint, DEFAULT_START_LIMITS } from './server.js';
export type { StartEndpoint, StartEndpointOptions, StartServerLimits } from './server.js';
export { StartDeclined, type StartHooks } from './request-checks.js';
export { REDACTED_TOKEN } from './request-checks.js';
export type { StartEndpointStats } from './stats.js';
export { readSecretToken, SECRET_TOKEN_LENGTH } from './secret-file.js';
export { createStartCore, type StartCore, type StartCoreOptions } from './core.js';
export {
  createRelayedStart,
  RELAYED_START_TOLERANCE_MS,
  RELAYED_CONFIRM_GRACE_MS,
  type RelayedStarts,
  type RelayedStartOutcome,
  type ConfirmOutcome,
} from './relayed.js';
export { RelayVouchers } from './voucher.js';
