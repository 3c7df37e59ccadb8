/** The MDB side of qrvend, for the daemon, the doctor, the demo and the simulators. */
export { MachineLoop, type MachineLoopOptions, type MachineLoopStats, type BoardResetLine } from './machine-loop.js';
export { probeBoard, type ProbeOptions } from './probe.js';
export {
  createMdbTransport,
  MemoryWire,
  openSerialLink,
  type MdbTransport,
  type ByteLink,
  type OpenLink,
} from './transport/index.js';
