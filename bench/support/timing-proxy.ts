/**
 * A pass-through in front of the gateway simulator, on loopback, that notes when each request
 * arrived whole and when its answer was handed back (performance.now() of the bench process, the
 * clock the VMC end of the pty is read with). The daemon's share of the consumer's wait is measured
 * between these and the pty, from outside the daemon.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface TimedExchange {
  op: string;
  /** TransactionId of the request (BasicInfo.TransactionId), '' when absent. */
  txId: string;
  receivedAtMs: number;
  answeredAtMs: number | null;
  responseText: string | null;
}

export interface TimingProxy {
  url: string;
  exchanges: TimedExchange[];
  close(): Promise<void>;
}

export async function startTimingProxy(upstreamUrl: string): Promise<TimingProxy> {
  const upstream = new URL(upstreamUrl);
  const agent = new http.Agent({ keepAlive: true });
  const exchanges: TimedExchange[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // Noted first: the proxy's own parsing below is not the agent's time.
      const receivedAtMs = performance.now();
      const body = Buffer.concat(chunks);
      let txId = '';
      try {
        txId = String((JSON.parse(body.toString('utf8')) as { BasicInfo?: { TransactionId?: unknown } }).BasicInfo?.TransactionId ?? '');
      } catch {
        // not JSON: forwarded as it is
      }
      const ex: TimedExchange = { op: (req.url ?? '').split('/').pop() ?? '', txId, receivedAtMs, answeredAtMs: null, responseText: null };
      exchanges.push(ex);
      const up = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers, agent }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (c: Buffer) => parts.push(c));
        answer.on('end', () => {
          const text = Buffer.concat(parts);
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(text);
          ex.answeredAtMs = performance.now();
          ex.responseText = text.toString('utf8');
        });
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
