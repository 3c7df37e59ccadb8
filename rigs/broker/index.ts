/**
 * The broker for tests: aedes in-process by default (`npm test`); Debian's mosquitto when
 * QRVEND_TEST_BROKER=mosquitto (`npm run fleet-test`), so the same end-to-end cases run against both.
 */
import { startAedesBroker } from './aedes-broker.js';
import type { TestBroker } from './types.js';

export type { TestBroker } from './types.js';
export { startAedesBroker } from './aedes-broker.js';
export { startTcpGate, type TcpGate, type GateMode } from './tcp-gate.js';

export type BrokerFactory = (options?: { port?: number }) => Promise<TestBroker>;
let mosquittoFactory: BrokerFactory | null = null;

/** Registered by the mosquitto launcher's module, so this file does not depend on it. */
export function registerMosquitto(factory: BrokerFactory): void {
  mosquittoFactory = factory;
}

export async function startTestBroker(options: { port?: number } = {}): Promise<TestBroker> {
  if (process.env.QRVEND_TEST_BROKER === 'mosquitto') {
    if (!mosquittoFactory) {
      // The launcher lives beside this file (mosquitto-broker.ts); imported lazily so npm test never needs it.
      await import('./mosquitto-broker.js' as string);
    }
    if (!mosquittoFactory) throw new Error('QRVEND_TEST_BROKER=mosquitto but no mosquitto launcher is registered');
    return mosquittoFactory(options);
  }
  return startAedesBroker(options);
}
