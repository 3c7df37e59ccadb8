/**
 * A misbehaving gateway for tests (docs/decisions/hardening.md items 4 and 5), on loopback: forwards every request
 * to the gateway simulator, except the operations told to misbehave, which get
 *   - `huge-declared`: 200 with a Content-Length of `hugeBytes` and that many bytes of JSON-ish text;
 *   - `huge-undeclared`: 200 without Content-Length, `hugeBytes` of text, the end marked by closing
 *     the connection (what killed the daemon: JSON.parse of the whole download);
 *   - `other-currency`: the simulator's answer with a BasicInfo naming USD/840 added.
 * The huge bodies are generated as they are sent and stop when the client goes away.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { OPERATIONS } from '../../src/gateway/protocol/operations.js';
import type { GatewayOperation } from '../../src/gateway/outcome.js';

export type Misbehaviour = 'huge-declared' | 'huge-undeclared' | 'other-currency';

export interface GatewayFront {
  readonly url: string;
  /** How each operation misbehaves (absent = forwarded untouched). */
  readonly misbehave: Map<GatewayOperation, Misbehaviour>;
  /** Bytes of huge answers written so far (to show the daemon stopped reading). */
  readonly hugeBytesWritten: number;
  /** Requests per operation. */
  readonly seen: Map<GatewayOperation, number>;
  close(): Promise<void>;
}

const CHUNK = Buffer.alloc(64 * 1024, 0x20); // spaces: valid JSON whitespace, so only the size is wrong

/** `upstream` is read per request, so the front can be started before the simulator it fronts. */
export async function startGatewayFront(options: {
  upstream: () => string;
  hugeBytes?: number;
}): Promise<GatewayFront> {
  const hugeBytes = options.hugeBytes ?? 64 * 1024 * 1024;
  const byPath = new Map(Object.entries(OPERATIONS).map(([op, spec]) => [spec.path, op as GatewayOperation]));
  const misbehave = new Map<GatewayOperation, Misbehaviour>();
  const seen = new Map<GatewayOperation, number>();
  const sockets = new Set<Socket>();
  let hugeBytesWritten = 0;

  const streamHuge = (socket: Socket, declared: boolean) => {
    socket.write(
      `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: ` +
        `close\r\n${declared ? `Content-Length: ${hugeBytes + 2}\r\n` : ''}\r\n{`,
    );
    let left = hugeBytes;
    const pump = () => {
      while (left > 0 && !socket.destroyed) {
        const n = Math.min(left, CHUNK.length);
        left -= n;
        hugeBytesWritten += n;
        if (!socket.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) return void socket.once('drain', pump);
      }
      if (!socket.destroyed) socket.end('}');
    };
    pump();
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const op = byPath.get(req.url ?? '');
      if (op !== undefined) seen.set(op, (seen.get(op) ?? 0) + 1);
      const mode = op === undefined ? undefined : misbehave.get(op);
      if (mode === 'huge-declared' || mode === 'huge-undeclared')
        return streamHuge(req.socket, mode === 'huge-declared');
      void fetch(`${options.upstream()}${req.url ?? ''}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      })
        .then(async (up) => {
          let text = await up.text();
          if (mode === 'other-currency') {
            // The answer names its currency in a BasicInfo like the request's, only another one.
            const asked =
              (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { BasicInfo?: Record<string, unknown> })
                .BasicInfo ?? {};
            // Added as text, so the rest (PaymentInfo above all) stays byte for byte what the gateway sent.
            const basicInfo = JSON.stringify({ ...asked, CurrencyCode: 'USD', CurrencyNumeric: '840' });
            text = text.replace(/^\s*\{/, `{"BasicInfo":${basicInfo},`);
          }
          res.writeHead(up.status, { 'content-type': 'application/json' }).end(text);
        })
        .catch(() => res.destroy());
    });
  });
  server.on('connection', (s: Socket) => (sockets.add(s), s.once('close', () => sockets.delete(s))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    misbehave,
    seen,
    get hugeBytesWritten() {
      return hugeBytesWritten;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
