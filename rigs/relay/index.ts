/**
 * Simulation of the Start relay's traffic: simulated machines that answer `cmd/start` on the fleet
 * broker, and Start load (paced or back to back) against a Start URL. `npm run relay-bench` uses
 * them; the fleet simulation can too (docs/relay.md, "Scale").
 */
export { startSimMachines, type SimMachines, type SimMachinesOptions, type SimMachineIdentity } from './machines.js';
export { openLoop, closedLoop, type LoadSample, type StartTarget, type BodyFor } from './load.js';
export { createTrustKit, type TrustKit } from './trust-kit.js';
