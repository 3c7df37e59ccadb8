/**
 * An artifact repository on loopback for tests: serves one file over HTTP or HTTPS, honours Range
 * (206) unless told to ignore it, and can cut the connection after a number of body bytes on its
 * first responses (a link that drops mid-download). Records each request's Range header.
 */
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface ArtifactServerOptions {
  body: Buffer;
  path: string;
  tls?: { cert: Buffer; key: Buffer };
  /** Cut the socket after this many body bytes, for the first `cuts` responses. */
  cutAfter?: number;
  cuts?: number;
  ignoreRange?: boolean;
  /** Answer every request for each of these paths with a 302 to the next one (after the last: `path`). */
  redirectChain?: string[];
}

export interface ArtifactServer {
  url: string;
  /** The Range header of each request (null: none). */
  ranges: Array<string | null>;
  close(): Promise<void>;
}

export async function startArtifactServer(o: ArtifactServerOptions): Promise<ArtifactServer> {
  const ranges: Array<string | null> = [];
  let cutsLeft = o.cuts ?? (o.cutAfter !== undefined ? 1 : 0);
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    ranges.push(req.headers.range ?? null);
    const hop = o.redirectChain?.indexOf(req.url ?? '') ?? -1;
    if (hop >= 0) {
      res.writeHead(302, { location: o.redirectChain![hop + 1] ?? o.path }).end();
      return;
    }
    if (req.url !== o.path) {
      res.writeHead(404).end();
      return;
    }
    let from = 0;
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (m !== null && !o.ignoreRange) {
      from = Number(m[1]);
      if (from >= o.body.length) {
        res.writeHead(416, { 'content-range': `bytes */${o.body.length}` }).end();
        return;
      }
      res.writeHead(206, {
        'content-length': o.body.length - from,
        'content-range': `bytes ${from}-${o.body.length - 1}/${o.body.length}`,
      });
    } else {
      res.writeHead(200, { 'content-length': o.body.length });
    }
    const rest = o.body.subarray(from);
    if (cutsLeft > 0 && o.cutAfter !== undefined && rest.length > o.cutAfter) {
      cutsLeft -= 1;
      res.write(rest.subarray(0, o.cutAfter), () => setImmediate(() => req.socket.destroy()));
      return;
    }
    res.end(rest);
  };
  const server: Server = o.tls ? createHttps({ cert: o.tls.cert, key: o.tls.key }, handler) : createHttp(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${o.tls ? 'https' : 'http'}://127.0.0.1:${port}${o.path}`,
    ranges,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
