/**
 * The update repository of the field test: HTTPS on the host's loopback, reached by the guest
 * through a guestfwd (qemu.ts GUEST_ARTIFACTS), its certificate self-signed for that address and
 * given to the agent as `updates.caFile`, as a site's private repository would be. Serves release
 * tarballs from files, honours `Range: bytes=N-` (206), and can be throttled so that a power cut
 * lands in the middle of a download. Records every request (path, Range, bytes sent).
 */
import { createReadStream, statSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Transform, pipeline } from 'node:stream';

export interface ArtifactRequest {
  path: string;
  range: string | null;
  status: number;
  /** Body bytes written before the response ended or the connection went. */
  sent: number;
}

export interface ArtifactServer {
  port: number;
  requests: ArtifactRequest[];
  /** Serves `file` at `path` (a URL path, e.g. `/qrvend_0.2.0_arm64.tar.gz`). */
  publish(path: string, file: string): void;
  /** Bytes per second for every response from now on (null: as fast as the link goes). */
  throttle(bytesPerSecond: number | null): void;
  close(): Promise<void>;
}

const CHUNK = 16 * 1024;

export async function startArtifactServer(tls: { cert: Buffer; key: Buffer }): Promise<ArtifactServer> {
  const files = new Map<string, string>();
  const requests: ArtifactRequest[] = [];
  let rate: number | null = null;
  const server: Server = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const path = (req.url ?? '').slice(0, 300);
    const record: ArtifactRequest = { path, range: req.headers.range?.slice(0, 100) ?? null, status: 404, sent: 0 };
    requests.push(record);
    const file = req.method === 'GET' ? files.get(path) : undefined;
    if (file === undefined) {
      res.writeHead(404).end();
      return;
    }
    const size = statSync(file).size;
    let from = 0;
    const m = /^bytes=(\d+)-$/.exec(record.range ?? '');
    if (m !== null) {
      from = Number(m[1]);
      if (from >= size) {
        record.status = 416;
        res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        return;
      }
      record.status = 206;
      res.writeHead(206, { 'content-length': size - from, 'content-range': `bytes ${from}-${size - 1}/${size}` });
    } else {
      record.status = 200;
      res.writeHead(200, { 'content-length': size });
    }
    // The throttle is read per chunk, so lifting it speeds up a response already under way.
    const pace = new Transform({
      highWaterMark: CHUNK,
      transform(chunk: Buffer, _enc, done) {
        record.sent += chunk.length;
        const delay = rate === null ? 0 : Math.ceil((chunk.length / rate) * 1000);
        if (delay === 0) done(null, chunk);
        else setTimeout(() => done(null, chunk), delay);
      },
    });
    pipeline(createReadStream(file, { start: from, highWaterMark: CHUNK }), pace, res, () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    publish: (path, file) => void files.set(path, file),
    throttle: (bytesPerSecond) => void (rate = bytesPerSecond),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
