/**
 * A real MQTT 3.1.1 broker inside the test process (aedes, from npm), on a loopback port: what
 * `npm test` runs the fleet link against, with nothing from apt. Not a mock: clients speak the
 * protocol to it over TCP. It does not speak MQTT 5 (`npm run fleet-test` covers that with
 * mosquitto).
 *
 * stop() closes the listener and every client connection (a broker outage); start() listens again
 * on the same port with a fresh broker (retained messages and sessions are gone, as after a
 * restart of a broker without persistence).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { Aedes, type AedesOptions } from 'aedes';
import type { TestBroker } from './types.js';

/** `authorizeForward`: a broker that withholds some deliveries (a test of what a client does without them). */
export async function startAedesBroker(
  options: { port?: number; authorizeForward?: AedesOptions['authorizeForward'] } = {},
): Promise<TestBroker> {
  let broker: Aedes | null = null;
  let server: Server | null = null;
  const sockets = new Set<Socket>();
  let port = options.port ?? 0;

  async function start(): Promise<void> {
    if (server) return;
    broker = await Aedes.createBroker(options.authorizeForward ? { authorizeForward: options.authorizeForward } : {});
    const b = broker;
    const s = createServer((socket) => {
      sockets.add(socket);
      // Small request/response messages (cmd/start): no Nagle delay on the broker's side either.
      socket.setNoDelay(true);
      socket.once('close', () => sockets.delete(socket));
      b.handle(socket);
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        s.off('error', reject);
        resolve();
      });
    });
    const address = s.address();
    if (address === null || typeof address === 'string') throw new Error('aedes broker: no TCP address');
    port = address.port;
    server = s;
  }

  async function stop(): Promise<void> {
    const s = server;
    const b = broker;
    server = null;
    broker = null;
    if (!s) return;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await new Promise<void>((resolve) => s.close(() => resolve()));
    if (b) await new Promise<void>((resolve) => b.close(() => resolve()));
  }

  await start();
  return {
    kind: 'aedes',
    protocolVersions: [3, 4],
    get port() {
      return port;
    },
    get url() {
      return `mqtt://127.0.0.1:${port}`;
    },
    start,
    stop,
    close: stop,
  };
}
