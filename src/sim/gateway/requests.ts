/**
 * The gateway simulator's request handling and the state it works on (server.ts holds the
 * sockets): routes the six operations, applies faults around the gateway's work, validates,
 * dispatches to the handlers, and serves the read-only ledger and the control endpoint.
 */
import type http from 'node:http';
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
export function checkedRules(rules: BehaviourRule[]): BehaviourRule[] {
  const parsed = parseControl({ rules });
  if (!parsed.ok) throw new QrvendError(ErrorCodes.CLI_USAGE, `gateway simulator rules: ${parsed.error}`);
  return rules;
}

/** What the request handling takes; GatewaySimulatorOptions (server.ts) adds the sockets' own. */
export interface SimGatewayCoreOptions {
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

/** One simulated gateway: its ledger, behaviours and faults, and the answer to each request. */
export class SimGatewayCore {
  readonly ledger = new SimLedger();
  readonly behaviours = new Behaviours();
  readonly faults: FaultInjector;
  hangMs: number;
  readonly maxBody: number;
  private readonly ctx: HandlerContext;
  private readonly log: Logger | undefined;
  private readonly hangs = new Set<NodeJS.Timeout>();

  constructor(private readonly options: SimGatewayCoreOptions) {
    this.behaviours.setRules(checkedRules(options.rules ?? []));
    this.faults = new FaultInjector(options.faults ?? [], options.seed ?? 1);
    this.hangMs = options.hangMs ?? 60_000;
    this.maxBody = options.maxBodyBytes ?? 1_048_576;
    this.ctx = { ledger: this.ledger, behaviours: this.behaviours, now: options.now ?? (() => new Date()) };
    this.log = options.logger;
  }

  control(cmd: ControlCommand): void {
    if (cmd.faults !== undefined) this.faults.set(cmd.faults, cmd.seed);
    else if (cmd.seed !== undefined) this.faults.set(this.faults.active(), cmd.seed);
    if (cmd.rules !== undefined) this.behaviours.setRules(cmd.rules);
    if (cmd.addRules !== undefined) this.behaviours.addRules(cmd.addRules);
    if (cmd.hangMs !== undefined) this.hangMs = cmd.hangMs;
    if (cmd.resetLedger === true) this.ledger.clear();
  }

  view(): LedgerView {
    return this.ledger.view(this.faults.counts);
  }

  /** Stops every `hang` fault's timer (the server is closing). */
  clearHangs(): void {
    for (const t of this.hangs) clearTimeout(t);
    this.hangs.clear();
  }

  /** The server's request listener: every failure still gets an answer (413 for a body too large). */
  onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.route(req, res).catch((err: unknown) => {
      if (err instanceof BodyTooLarge)
        return sendStatus(res, 413, DeclineCodes.ValidationError, `body larger than ${this.maxBody} bytes`);
      this.log?.error({ err }, 'sim gateway failed on a request');
      if (!res.headersSent) sendStatus(res, 500, DeclineCodes.GeneralException, 'simulator error');
    });
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sim').pathname;
    if (path === '/_sim/ledger') {
      if (req.method !== 'GET') return sendStatus(res, 405, DeclineCodes.NotAllowed, 'the ledger is read-only: GET it');
      return send(res, 200, JSON.stringify(this.view()));
    }
    if (path === '/_sim/control') return this.serveControl(req, res);
    const op = operationForPath(path);
    if (op === null) return sendStatus(res, 404, DeclineCodes.NotAllowed, `no operation at ${path}`);
    return this.serveOperation(op, req, res);
  }

  private async serveControl(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { faults, behaviours } = this;
    if (req.method === 'GET')
      return send(res, 200, JSON.stringify({ faults: faults.active(), rules: behaviours.list(), hangMs: this.hangMs }));
    if (req.method !== 'POST') return sendStatus(res, 405, DeclineCodes.NotAllowed, 'POST a control command');
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req, this.maxBody));
    } catch (err) {
      if (err instanceof BodyTooLarge) throw err;
      return send(res, 400, JSON.stringify({ error: 'the control body is not JSON' }));
    }
    const parsed = parseControl(body);
    if (!parsed.ok) return send(res, 400, JSON.stringify({ error: parsed.error }));
    this.control(parsed.value);
    const state = { ok: true, faults: faults.active(), rules: behaviours.list(), hangMs: this.hangMs };
    return send(res, 200, JSON.stringify(state));
  }

  private async serveOperation(
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
    const text = await readBody(req, this.maxBody);
    const fault = this.faults.draw(op);
    if (fault !== null && FAULT_TIMING[fault] === 'before') return this.injectBefore(fault, res);
    const out = this.gatewayAnswer(op, text);
    this.log?.debug({ op, fault, answer: out.length > 300 ? `${out.slice(0, 300)}...` : out }, 'sim gateway request');
    answer(res, fault, out);
  }

  /** The gateway's work on a request body: a refusal recorded in the ledger, or the handler's answer. */
  private gatewayAnswer(op: GatewayOperation, text: string): string {
    const checked = checkRequest(op, text, { lenient: this.options.lenient === true });
    if (!checked.ok) {
      this.ledger.reject({
        op,
        transactionId: checked.transactionId,
        code: checked.status.Code ?? 0,
        member: checked.member,
        message: checked.message,
      });
      return JSON.stringify({ Status: checked.status });
    }
    const handler = HANDLERS[op] as (r: IncomingRequest<typeof op>, c: HandlerContext) => string;
    const out = handler({ value: checked.value, raw: checked.raw, text }, this.ctx);
    this.ledger.countRequest(op, checked.value.BasicInfo.TransactionId);
    return out;
  }

  private injectBefore(fault: FaultKind, res: http.ServerResponse): void {
    if (fault === 'http500') send(res, 500, JSON.stringify({ error: 'simulated internal server error' }));
    else if (fault === 'reset-before') res.socket?.resetAndDestroy();
    else this.hang(res);
  }

  private hang(res: http.ServerResponse): void {
    const timer = setTimeout(() => {
      this.hangs.delete(timer);
      res.socket?.destroy();
    }, this.hangMs);
    this.hangs.add(timer);
    res.on('close', () => {
      clearTimeout(timer);
      this.hangs.delete(timer);
    });
  }
}

function answer(res: http.ServerResponse, fault: FaultKind | null, text: string): void {
  if (fault === 'reset-after') res.socket?.resetAndDestroy();
  else if (fault === 'not-json') send(res, 200, NOT_JSON_BODY, 'text/html');
  else if (fault === 'bad-schema') send(res, 200, BAD_SCHEMA_BODY);
  else send(res, 200, text);
}
