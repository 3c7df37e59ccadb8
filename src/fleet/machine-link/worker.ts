/**
 * The fleet worker thread's entry (docs/fleet.md): constructs the machine's end of the fleet link,
 * FleetDeviceLink (link.ts), with the real MQTT client, clocks and ports, and starts it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { connect } from 'mqtt';
import { createLogger } from '../../core/log.js';
import { monotonicNow, wallNow } from '../../core/clock.js';
import type { FleetToMain, MainToFleet } from '../../ipc/messages.js';
import { FleetDeviceLink } from './link.js';
import type { FleetWorkerData } from './worker-data.js';

export type { FleetWorkerData } from './worker-data.js';

const data = workerData as FleetWorkerData;
const main = parentPort!;
const link = new FleetDeviceLink(data, {
  connectMqtt: connect,
  toMain: (message: FleetToMain) => main.postMessage(message),
  payment: data.paymentPort,
  log: createLogger({ level: data.config.log.level, name: 'fleet', file: data.logFile }),
  monotonicNow,
  wallNow,
});
main.on('message', (message: MainToFleet) => link.fromMain(message));
link.start();
