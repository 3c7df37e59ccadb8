/** The ledger's public surface for the payment worker, the CLI and doctor. */
export {
  openLedger,
  Ledger,
  type OpenLedgerOptions,
  type JsonObjectOrText,
  type AuthorizationFacts,
} from './ledger.js';
export type { CorruptionAlarm } from './db.js';
export type { LedgerTimers, WritabilityListener } from './connection.js';
export { LedgerOutbox } from './outbox.js';
export { OutboxDrainer, type OutboxDrainerOptions, type OutboxSender, type DrainerStoreConfig } from './drainer.js';
export { backoffCeilingMs, backoffDelayMs, judgeAttempt, type BackoffPolicy, type Verdict } from './backoff.js';
export {
  recoverLedger,
  REASON_CANCELLED_BY_MACHINE,
  RECOVERY_REASON_TEXT,
  type RecoveryBodies,
  type RecoveryReport,
  type RecoverOptions,
  type RecoveredTransaction,
} from './recovery.js';
export { inspectLedger, type LedgerInspection } from './inspect.js';
export { SCHEMA_VERSION } from './schema.js';
export {
  checkTransition,
  recoveryActionFor,
  CLOSED_STATES,
  DELIVERING_STATES,
  type Flow,
  type StaticState,
  type DynamicState,
  type TxState,
  type UnpaidResult,
  type TransitionName,
  type RecoveryAction,
} from './states.js';
export type * from './types.js';
export { DexAuditLog, KEEP_AUDITS, type AuditRow, type AuditTrigger } from './dex-audits.js';
