/** The pty pair lives with the simulators (the chaos run and the benchmarks use it too). */
export { createPtyPair, type PtyPair } from '../../src/sim/pty-pair.js';
