/**
 * The floor of the Static Start figure: the same Start, over the same kinds of connection, disk
 * and pty, against the least an agent can do (start-floor-thread.ts) instead of the daemon. Like
 * pty-echo for the vend figures, it runs in its own process with the daemon's shape: a machine
 * loop thread holding the pty the way the daemon does (tty-link) and a worker
 * holding the HTTP endpoint, the SQLite file and the gateway connection. What the Start figure
 * shows beyond this floor is qrvend's own work (its checks, schemas, got, ledger, logging).
 *
 * Usage (forked): start-floor-process.js <agent pty path> <scratch dir> <gateway url> <authorization path>;
 * sends {type:'ready', port} over IPC once the pty is open and the endpoint listens.
 */
import { Worker } from 'node:worker_threads';
import { openTtyLink } from '../../src/mdb/transport/index.js';
import type { StartFloorThreadData, StartFloorThreadMessage } from './start-floor-thread.js';

const [path, dir, gatewayUrl, authorizationPath] = process.argv.slice(2);
if (path === undefined || dir === undefined || gatewayUrl === undefined || authorizationPath === undefined) {
  throw new Error('usage: start-floor-process.js <pty path> <scratch dir> <gateway url> <authorization path>');
}
// The daemon's own way of holding the pty on Linux (src/mdb/transport/tty-link.ts).
const link = await openTtyLink({ path, baudRate: 115200 });
// The VMC's polls and statuses need no answer here: read and dropped.
link.onData(() => {});
// Enable the reader, as a host would, so the simulator takes a session.
link.write('C,1\r\n');
const workerData: StartFloorThreadData = { dir, gatewayUrl, authorizationPath, funds: 10 };
const worker = new Worker(new URL('./start-floor-thread.js', import.meta.url), { workerData });
worker.on('message', (m: StartFloorThreadMessage) => {
  if (m.kind === 'begin') link.write(`C,START,${m.funds}\r\n`);
  else if (m.kind === 'listening') process.send?.({ type: 'ready', port: m.port });
});
worker.on('error', (err) => {
  process.stderr.write(`start-floor: ${err.message}\n`);
  process.exit(1);
});
const stop = () => {
  worker.postMessage({ kind: 'close' });
  void link.close().then(() => process.exit(0));
};
process.on('message', (m: { type: string }) => {
  if (m.type === 'stop') stop();
});
process.on('disconnect', stop);
