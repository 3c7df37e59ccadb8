/**
 * The HTTP(S) server under the Start endpoint and the Start relay, with the defences both need
 * (docs/security.md): Node's header, request and keep-alive deadlines, a connection guard that
 * decides on the raw TCP socket (before TLS or HTTP parsing spends anything on it), and idle
 * sockets struck and closed; requests Node's parser refuses answered with the same refusals; the
 * listen and the graceful close. What each server answers to a request stays in its own file.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { httpRefusals, type StartAnswer } from './answers.js';
import { ConnectionGuard } from './connection-guard.js';
import { listenError, parseListen } from './listen.js';
import { writeRawAnswer } from './respond.js';
import type { StartServerLimits } from './server-limits.js';

export interface GuardedServer {
  server: Server;
  /** The connection guard, for the endpoint's stats. */
  guard: ConnectionGuard;
  /** Counts a misbehaviour (slow headers, a body that never came) against the socket's source. */
  strike(socket: Socket): void;
  /** Listens on `host:port` (the config's text); rejects with listenError naming it. */
  listen(address: string): Promise<{ host: string; port: number; origin: string }>;
  /** Stops accepting, lets requests in flight finish for limits.closeGraceMs, then cuts the rest. Idempotent. */
  close(): Promise<void>;
}

const monotonic = () => performance.now();

/** What createGuardedServer is given: the limits, the TLS files, and the caller's counters. */
export interface GuardedServerOptions {
  limits: StartServerLimits;
  tls: { cert: Buffer; key: Buffer } | null;
  /** Called for each connection the guard refuses (counted by the caller). */
  onRefused?: () => void;
  /** Called for every error Node's HTTP parser reports on a client socket, resets included. */
  onClientError?: () => void;
  /** Called before a refusal is written for a request the parser could not accept. */
  onParserRefusal?: (answer: StartAnswer, socket: Socket, parserCode: string | undefined) => void;
  /** The guard's key for a peer address (the relay keys IPv6 by /64); default the address itself. */
  sourceKey?: (address: string) => string;
}

export function createGuardedServer(options: GuardedServerOptions): GuardedServer {
  const { limits, tls } = options;
  const server = createNodeServer(limits, tls);
  const guard = new ConnectionGuard({
    total: limits.maxConnections,
    perSource: Math.min(limits.maxConnectionsPerSource, limits.maxConnections),
    suspectShare: limits.suspectShare,
    suspectForMs: limits.suspectForMs,
  });
  const keyOf = options.sourceKey ?? ((address: string) => address);
  const strike = (socket: Socket) => {
    if (socket.remoteAddress !== undefined) guard.strike(keyOf(socket.remoteAddress), monotonic());
  };
  admitThroughGuard(server, guard, keyOf, options.onRefused);
  server.setTimeout(limits.idleSocketTimeoutMs, (socket) => {
    strike(socket);
    socket.destroy();
  });
  answerClientErrors(server, options, strike);
  return {
    server,
    guard,
    strike,
    listen: (address) => listenOn(server, tls !== null, address),
    close: closeOnce(server, limits.closeGraceMs),
  };
}

/** Node's server with its header, request and keep-alive deadlines set from the limits. */
function createNodeServer(limits: StartServerLimits, tls: GuardedServerOptions['tls']): Server {
  const serverOptions = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    maxHeaderSize: limits.maxHeaderBytes,
    // Node checks the two timeouts above on this interval (default 30 s): too coarse for them.
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
  };
  const server: Server = tls ? createHttpsServer({ ...serverOptions, ...tls }) : createHttpServer(serverOptions);
  // Only a backstop: the guard below refuses first and fairly. Node counts a refused socket until
  // its close event, so under reconnect churn a tight backstop would drop well-behaved clients.
  server.maxConnections = limits.maxConnections * 4;
  return server;
}

/** The guard decides on each raw TCP socket, before TLS or HTTP parsing spends anything on it. */
function admitThroughGuard(
  server: Server,
  guard: ConnectionGuard,
  keyOf: (address: string) => string,
  onRefused: (() => void) | undefined,
): void {
  server.on('connection', (socket: Socket) => {
    const source = socket.remoteAddress === undefined ? undefined : keyOf(socket.remoteAddress);
    if (source === undefined) return socket.destroy();
    if (!guard.admit(source, monotonic()).admit) {
      onRefused?.();
      socket.destroy();
      return;
    }
    socket.once('close', () => guard.release(source, monotonic()));
  });
}

/** Requests Node's parser refuses get the same refusals the endpoint writes itself. */
function answerClientErrors(server: Server, options: GuardedServerOptions, strike: (socket: Socket) => void): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    options.onClientError?.();
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') strike(socket);
    const answer =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? httpRefusals.timedOut()
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? httpRefusals.headersTooLarge()
          : httpRefusals.badRequest();
    options.onParserRefusal?.(answer, socket, err.code);
    writeRawAnswer(socket, answer, options.limits.lingerMs);
  });
}

async function listenOn(
  server: Server,
  tls: boolean,
  address: string,
): Promise<{ host: string; port: number; origin: string }> {
  const { host, port } = parseListen(address);
  await new Promise<void>((resolve, reject) => {
    const onError = (err: unknown): void => reject(listenError(address, err));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const bound = server.address();
  const boundPort = typeof bound === 'object' && bound !== null ? bound.port : port;
  return {
    host,
    port: boundPort,
    origin: `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${boundPort}`,
  };
}

/** The idempotent graceful close: in-flight requests get closeGraceMs, then the rest are cut. */
function closeOnce(server: Server, closeGraceMs: number): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => {
    closing ??= new Promise<void>((resolve) => {
      const force = setTimeout(() => server.closeAllConnections(), closeGraceMs);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };
}
