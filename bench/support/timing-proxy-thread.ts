/**
 * The timing proxy's own thread (timing-proxy.ts): the pass-through runs here, on an event loop of
 * its own, so a request is noted when it arrives, not when the bench's main loop is done with
 * whatever it was doing (the wallet's answer to the same Start arrives at about the same moment).
 * Times are process.hrtime in ms (the monotonic clock every thread and process shares); the main
 * thread turns them into its performance.now().
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

export type ProxyThreadMessage =
  | { kind: 'listening'; port: number }
  | { kind: 'received'; id: number; op: string; txId: string; atHrMs: number }
  | { kind: 'answered'; id: number; atHrMs: number; responseText: string }
  | { kind: 'closed' };

const hrMs = (): number => Number(process.hrtime.bigint()) / 1e6;
const port = parentPort!;
const upstream = new URL((workerData as { upstreamUrl: string }).upstreamUrl);
const agent = new http.Agent({ keepAlive: true });
const post = (m: ProxyThreadMessage) => port.postMessage(m);
let nextId = 0;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    // Noted first: the proxy's own parsing below is not the agent's time.
    const atHrMs = hrMs();
    const id = nextId++;
    const body = Buffer.concat(chunks);
    let txId = '';
    try {
      txId = String(
        (JSON.parse(body.toString('utf8')) as { BasicInfo?: { TransactionId?: unknown } }).BasicInfo?.TransactionId ??
          '',
      );
    } catch {
      // not JSON: forwarded as it is
    }
    post({ kind: 'received', id, op: (req.url ?? '').split('/').pop() ?? '', txId, atHrMs });
    const up = http.request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers, agent },
      (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => {
          const text = Buffer.concat(parts);
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(text);
          post({ kind: 'answered', id, atHrMs: hrMs(), responseText: text.toString('utf8') });
        });
      },
    );
    up.on('error', () => res.destroy());
    up.end(body);
  });
});

port.on('message', (m: { kind: 'close' }) => {
  if (m.kind !== 'close') return;
  server.closeAllConnections();
  server.close(() => {
    agent.destroy();
    post({ kind: 'closed' });
    port.close();
  });
});
server.listen(0, '127.0.0.1', () => post({ kind: 'listening', port: (server.address() as AddressInfo).port }));
