/** The gateway simulator: programmatic entry for tests, the demo and chaos runs. */
export { startGatewaySimulator, type GatewaySimulator, type GatewaySimulatorOptions } from './server.js';
export { FAULT_KINDS, FAULT_TIMING, parseFaultFlag, type FaultKind, type FaultSpec } from './faults.js';
export { amountBehaviour, type Behaviour, type BehaviourRule } from './behaviours.js';
export { ControlSchema, type ControlCommand } from './control.js';
export type { LedgerView, TxRecord, TxState, RejectedRequest } from './ledger.js';
