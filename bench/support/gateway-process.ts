/**
 * The gateway simulator in its own process, so that its work (validation, JSON) does not run on
 * the event loop of whoever is being measured, as a real gateway would not. In front of it, a
 * delaying proxy plays a slow gateway: every request is held `delayMs` before it is forwarded.
 *
 * Started by GatewayProcess (fork, IPC). Messages in: {type:'delay', ms}, {type:'summary'},
 * {type:'stop'}. Messages out: {type:'ready', url, slowUrl}, {type:'summary', summary}.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGatewaySimulator } from '../../src/sim/gateway/index.js';

type Incoming = { type: 'delay'; ms: number } | { type: 'summary' } | { type: 'stop' };

const sim = await startGatewaySimulator({ host: '127.0.0.1', port: 0, maxBodyBytes: 4 * 1048576 });
const target = new URL(sim.url);
const agent = new http.Agent({ keepAlive: true });
let delayMs = 0;

const proxy = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    setTimeout(() => {
      const upstream = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers, agent },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(Buffer.concat(chunks));
    }, delayMs);
  });
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const slowUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

process.on('message', (msg: Incoming) => {
  if (msg.type === 'delay') delayMs = msg.ms;
  else if (msg.type === 'summary') process.send?.({ type: 'summary', summary: sim.ledger().summary });
  else if (msg.type === 'stop') {
    proxy.closeAllConnections();
    proxy.close();
    agent.destroy();
    void sim.close().then(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready', url: sim.url, slowUrl });
