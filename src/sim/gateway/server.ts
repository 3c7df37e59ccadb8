/**
 * The gateway simulator's HTTP(S) server: the sockets, the listen and the close. What it answers
 * (the six operations with their faults, the ledger and the control endpoint) is in requests.ts.
 * Loopback by default; HTTPS when given a certificate and key.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { BehaviourRule } from './behaviours.js';
import type { ControlCommand } from './control.js';
import type { FaultSpec } from './faults.js';
import type { LedgerView } from './ledger.js';
import { checkedRules, SimGatewayCore, type SimGatewayCoreOptions } from './requests.js';

export interface GatewaySimulatorOptions extends SimGatewayCoreOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** How long an idle keep-alive connection is kept before the server closes it (Node's default: 5 s). */
  keepAliveTimeoutMs?: number;
}

export interface GatewaySimulator {
  /** http(s)://host:port, the gateway.baseUrl to use. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  ledger(): LedgerView;
  setFaults(faults: FaultSpec[], seed?: number): void;
  setRules(rules: BehaviourRule[]): void;
  addRules(rules: BehaviourRule[]): void;
  /** The same command POST /_sim/control takes. */
  control(command: ControlCommand): void;
  resetLedger(): void;
  close(): Promise<void>;
}

export async function startGatewaySimulator(options: GatewaySimulatorOptions = {}): Promise<GatewaySimulator> {
  const host = options.host ?? '127.0.0.1';
  const core = new SimGatewayCore(options);
  const sockets = new Set<Socket>();
  const listener: http.RequestListener = (req, res) => core.onRequest(req, res);

  const server = options.tls
    ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, listener)
    : http.createServer(listener);
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `${options.tls ? 'https' : 'http'}://${urlHost}:${port}`,
    host,
    port,
    ledger: () => core.view(),
    setFaults: (list, seed) => core.faults.set(list, seed),
    setRules: (rules) => core.behaviours.setRules(checkedRules(rules)),
    addRules: (rules) => core.behaviours.addRules(checkedRules(rules)),
    control: (command) => core.control(command),
    resetLedger: () => core.ledger.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        core.clearHangs();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
