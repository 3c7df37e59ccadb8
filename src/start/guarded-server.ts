/**
 * The HTTP(S) server under the Start endpoint and the Start relay, with the defences both need
 * (docs/security.md): Node's header, request and keep-alive deadlines, a connection guard that
 * decides on the raw TCP socket (before TLS or HTTP parsing spends anything on it), and idle
 * sockets struck and closed. What each server answers stays in its own file.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { ConnectionGuard } from './connection-guard.js';
import type { StartServerLimits } from './server.js';

export interface GuardedServer {
  server: Server;
  /** The connection guard, for the endpoint's stats. */
  guard: ConnectionGuard;
  /** Counts a misbehaviour (slow headers, a body that never came) against the socket's source. */
  strike(socket: Socket): void;
}

export function createGuardedServer(options: {
  limits: StartServerLimits;
  tls: { cert: Buffer; key: Buffer } | null;
  /** Called for each connection the guard refuses (counted by the caller). */
  onRefused?: () => void;
}): GuardedServer {
  const { limits, tls } = options;
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
  const guard = new ConnectionGuard({
    total: limits.maxConnections,
    perSource: Math.min(limits.maxConnectionsPerSource, limits.maxConnections),
    suspectShare: limits.suspectShare,
    suspectForMs: limits.suspectForMs,
  });
  const monotonic = () => performance.now();
  const strike = (socket: Socket) => {
    if (socket.remoteAddress !== undefined) guard.strike(socket.remoteAddress, monotonic());
  };
  server.on('connection', (socket: Socket) => {
    const source = socket.remoteAddress;
    if (source === undefined) return socket.destroy();
    if (!guard.admit(source, monotonic()).admit) {
      options.onRefused?.();
      socket.destroy();
      return;
    }
    socket.once('close', () => guard.release(source, monotonic()));
  });
  server.setTimeout(limits.idleSocketTimeoutMs, (socket) => {
    strike(socket);
    socket.destroy();
  });
  return { server, guard, strike };
}
