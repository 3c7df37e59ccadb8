export { VmcSimulator, type VmcSimulatorOptions, type VendPolicy, type SimReaderState } from './simulator.js';
export {
  dispensedTotal,
  owedVend,
  type SimSessionRecord,
  type SimVendRecord,
  type SimVendOutcome,
  type SimSessionEnd,
} from './record.js';
export { NOISE_KINDS, noiseLine, type NoiseKind } from './noise.js';
export { seededRandom } from '../seeded-random.js';
export { parseScript, parseStep, runScript, runStep, type ScriptStep } from './script.js';
export { reportCashSale, resetSeenAsInactive } from './field-lines.js';
