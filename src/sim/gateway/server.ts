/**
 * The gateway simulator's HTTP(S) server: routes the six operations, applies faults around the
 * gateway's work, validates, dispatches to the handlers, and serves the read-only ledger and the
 * control endpoint. Loopback by default; HTTPS when given a certificate and key.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../../core/log.js';
import type { GatewayOperation } from '../../gateway/outcome.js';
import { declinedStatus, DeclineCodes, operationForPath } from '../../gateway/protocol/index.js';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { Behaviours, type BehaviourRule } from './behaviours.js';
import { parseControl, type ControlCommand } from './control.js';
import { FAULT_TIMING, FaultInjector, type FaultKind, type FaultSpec } from './faults.js';
import { handleGenerateQR, handleInquiry, handleVoid } from './dynamic-handlers.js';
import type { HandlerContext, IncomingRequest } from './handler-parts.js';
import { handleAuthorization, handleCancel, handleSettlement } from './static-handlers.js';
import { SimLedger, type LedgerView } from './ledger.js';
import { checkRequest, isJsonMediaType } from './validation.js';

export interface GatewaySimulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** How long an idle keep-alive connection is kept before the server closes it (Node's default: 5 s). */
  keepAliveTimeoutMs?: number;
  faults?: FaultSpec[];
  /** Seed of the fault PRNG (default 1). */
  seed?: number;
  rules?: BehaviourRule[];
  /** How long a `hang` fault holds a request before dropping it (default 60 s). */
  hangMs?: number;
  maxBodyBytes?: number;
  /** Clock for issued date-times and pay-after-ms (tests). */
  now?: () => Date;
  /**
   * Accept (and drop) request members the interface does not define, instead of answering 998
   * naming them (`--lenient`, for integrators who need the old behaviour).
   */
  lenient?: boolean;
  logger?: Logger;
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

const HANDLERS: { [O in GatewayOperation]: (req: IncomingRequest<O>, ctx: HandlerContext) => string } = {
  Authorization: handleAuthorization,
  Settlement: handleSettlement,
  Cancel: handleCancel,
  GenerateQR: handleGenerateQR,
  Inquiry: handleInquiry,
  Void: handleVoid,
};

/** What a `not-json` fault sends: what a proxy in front of a gateway typically returns. */
const NOT_JSON_BODY = '<html><body><h1>502 Bad Gateway</h1></body></html>';
/** What a `bad-schema` fault sends: JSON, but no valid Status. */
const BAD_SCHEMA_BODY = JSON.stringify({ Status: { Verdict: 'Maybe', Code: 'x' }, Unexpected: true });

class BodyTooLarge extends Error {}

function readBody(req: http.IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new BodyTooLarge());
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: http.ServerResponse, status: number, body: string, type = 'application/json; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** An answer that is not HTTP 200 still carries a Status, like every other answer of the gateway. */
function sendStatus(res: http.ServerResponse, httpStatus: number, code: number, message: string): void {
  send(res, httpStatus, JSON.stringify({ Status: declinedStatus(code, message) }));
}

/** Rules given through the API are held to the control endpoint's rules (no Declined with Code 0). */
function checkedRules(rules: BehaviourRule[]): BehaviourRule[] {
  const parsed = parseControl({ rules });
  if (!parsed.ok) throw new QrvendError(ErrorCodes.CLI_USAGE, `gateway simulator rules: ${parsed.error}`);
  return rules;
}

export async function startGatewaySimulator(options: GatewaySimulatorOptions = {}): Promise<GatewaySimulator> {
  const host = options.host ?? '127.0.0.1';
  const ledger = new SimLedger();
  const behaviours = new Behaviours();
  behaviours.setRules(checkedRules(options.rules ?? []));
  const faults = new FaultInjector(options.faults ?? [], options.seed ?? 1);
  let hangMs = options.hangMs ?? 60_000;
  const maxBody = options.maxBodyBytes ?? 1_048_576;
  const ctx: HandlerContext = { ledger, behaviours, now: options.now ?? (() => new Date()) };
  const log = options.logger;
  const sockets = new Set<Socket>();
  const hangs = new Set<NodeJS.Timeout>();

  function control(cmd: ControlCommand): void {
    if (cmd.faults !== undefined) faults.set(cmd.faults, cmd.seed);
    else if (cmd.seed !== undefined) faults.set(faults.active(), cmd.seed);
    if (cmd.rules !== undefined) behaviours.setRules(cmd.rules);
    if (cmd.addRules !== undefined) behaviours.addRules(cmd.addRules);
    if (cmd.hangMs !== undefined) hangMs = cmd.hangMs;
    if (cmd.resetLedger === true) ledger.clear();
  }

  const view = () => ledger.view(faults.counts);

  function hang(res: http.ServerResponse): void {
    const timer = setTimeout(() => {
      hangs.delete(timer);
      res.socket?.destroy();
    }, hangMs);
    hangs.add(timer);
    res.on('close', () => {
      clearTimeout(timer);
      hangs.delete(timer);
    });
  }

  function injectBefore(fault: FaultKind, res: http.ServerResponse): void {
    if (fault === 'http500') send(res, 500, JSON.stringify({ error: 'simulated internal server error' }));
    else if (fault === 'reset-before') res.socket?.resetAndDestroy();
    else hang(res);
  }

  function answer(res: http.ServerResponse, fault: FaultKind | null, text: string): void {
    if (fault === 'reset-after') res.socket?.resetAndDestroy();
    else if (fault === 'not-json') send(res, 200, NOT_JSON_BODY, 'text/html');
    else if (fault === 'bad-schema') send(res, 200, BAD_SCHEMA_BODY);
    else send(res, 200, text);
  }

  async function serveOperation(
    op: GatewayOperation,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<void> {
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return sendStatus(res, 405, DeclineCodes.NotAllowed, `${op} takes POST`);
    }
    if (!isJsonMediaType(req.headers['content-type'])) {
      return sendStatus(
        res,
        415,
        DeclineCodes.ValidationError,
        'Content-Type must be application/json, text/json or application/*+json',
      );
    }
    const text = await readBody(req, maxBody);
    const fault = faults.draw(op);
    if (fault !== null && FAULT_TIMING[fault] === 'before') return injectBefore(fault, res);
    const checked = checkRequest(op, text, { lenient: options.lenient === true });
    let out: string;
    if (!checked.ok) {
      ledger.reject({
        op,
        transactionId: checked.transactionId,
        code: checked.status.Code ?? 0,
        member: checked.member,
        message: checked.message,
      });
      out = JSON.stringify({ Status: checked.status });
    } else {
      const handler = HANDLERS[op] as (r: IncomingRequest<typeof op>, c: HandlerContext) => string;
      out = handler({ value: checked.value, raw: checked.raw, text }, ctx);
      ledger.countRequest(op, checked.value.BasicInfo.TransactionId);
    }
    log?.debug({ op, fault, answer: out.length > 300 ? `${out.slice(0, 300)}...` : out }, 'sim gateway request');
    answer(res, fault, out);
  }

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sim').pathname;
    if (path === '/_sim/ledger') {
      if (req.method !== 'GET') return sendStatus(res, 405, DeclineCodes.NotAllowed, 'the ledger is read-only: GET it');
      return send(res, 200, JSON.stringify(view()));
    }
    if (path === '/_sim/control') {
      if (req.method === 'GET')
        return send(res, 200, JSON.stringify({ faults: faults.active(), rules: behaviours.list(), hangMs }));
      if (req.method !== 'POST') return sendStatus(res, 405, DeclineCodes.NotAllowed, 'POST a control command');
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req, maxBody));
      } catch (err) {
        if (err instanceof BodyTooLarge) throw err;
        return send(res, 400, JSON.stringify({ error: 'the control body is not JSON' }));
      }
      const parsed = parseControl(body);
      if (!parsed.ok) return send(res, 400, JSON.stringify({ error: parsed.error }));
      control(parsed.value);
      return send(res, 200, JSON.stringify({ ok: true, faults: faults.active(), rules: behaviours.list(), hangMs }));
    }
    const op = operationForPath(path);
    if (op === null) return sendStatus(res, 404, DeclineCodes.NotAllowed, `no operation at ${path}`);
    return serveOperation(op, req, res);
  }

  const listener: http.RequestListener = (req, res) => {
    route(req, res).catch((err: unknown) => {
      if (err instanceof BodyTooLarge)
        return sendStatus(res, 413, DeclineCodes.ValidationError, `body larger than ${maxBody} bytes`);
      log?.error({ err }, 'sim gateway failed on a request');
      if (!res.headersSent) sendStatus(res, 500, DeclineCodes.GeneralException, 'simulator error');
    });
  };

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
    ledger: view,
    setFaults: (list, seed) => faults.set(list, seed),
    setRules: (rules) => behaviours.setRules(checkedRules(rules)),
    addRules: (rules) => behaviours.addRules(checkedRules(rules)),
    control,
    resetLedger: () => ledger.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of hangs) clearTimeout(t);
        hangs.clear();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
