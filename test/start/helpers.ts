/**
 * Shared fixtures of the Start endpoint tests: a real endpoint on 127.0.0.1 with fake payment
 * hooks (the payment side is not under test here), a captured log, and small HTTP clients.
 */
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/core/log.js';
import { loadConfig } from '../../src/config/load.js';
import type { QrvendConfig } from '../../src/config/schema.js';
import { StartResponseSchema, type StartRequest, type StartResponse } from '../../src/gateway/protocol/start.js';
import { startStartEndpoint, type StartEndpoint, type StartServerLimits } from '../../src/start/index.js';

/** The test SecretToken: 64 random hex characters, fresh per process so no fixture can match it by luck. */
export const TOKEN = randomBytes(32).toString('hex');
export const INTEGRATOR = 'acme-wallet';
export const TERMINAL_ID = 'TERM-0001'; // the machine under test
export const UNI_QR = 'QRVEND-TEST-0001';
export const CONSUMER_DATA = { loyaltyId: 'L-778', campaign: { name: 'spring', discount: 0.1 }, tags: ['a', 'b'] };

let txCounter = 0;
/** A TransactionId never used before in this process (8..40 characters). */
export function freshTxId(): string {
  txCounter += 1;
  return `tx-${process.pid}-${String(txCounter).padStart(8, '0')}`;
}

/** A Start that passes every check against the fixture. */
export function validStart(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    AppUserId: 'user-00000000000000000000000000000000001', // 39 characters, under the 40 limit
    SecretToken: TOKEN,
    TerminalId: TERMINAL_ID,
    TransactionId: freshTxId(),
    Balance: 12.5,
    ConsumerData: CONSUMER_DATA,
    ...overrides,
  };
}

export function startConfig(overrides: Partial<QrvendConfig['start']> = {}): QrvendConfig['start'] {
  const { config } = loadConfig({ env: {} });
  return { ...config.start, listen: '127.0.0.1:0', integratorName: INTEGRATOR, ...overrides };
}

/** Fake payment side: records what it was asked, with knobs for busy, seen and failing accepts. */
export class FakePaymentSide {
  readonly accepted: StartRequest[] = [];
  readonly seen = new Set<string>();
  busy: string | null = null;
  failAccept: Error | null = null;
  /** When set, accept waits for this before resolving (to hold a Start "being accepted"). */
  gate: Promise<void> | null = null;
  /** Like the real payment side: once a Start is accepted the reader is busy with its session. */
  busyAfterAccept = false;
  /** TransactionIds the endpoint said it answered Approved, each with whether its log line was written then. */
  readonly answered: Array<{ txId: string; loggedBefore: boolean }> = [];
  /** Set by the fixture: the log lines written so far. */
  logLines: string[] = [];

  readonly hooks = {
    readerBusy: (): string | null => this.busy,
    transactionSeen: (txId: string): boolean => this.seen.has(txId),
    accept: async (request: StartRequest): Promise<void> => {
      this.accepted.push(request);
      if (this.gate) await this.gate;
      if (this.failAccept) throw this.failAccept;
      this.seen.add(request.TransactionId);
      if (this.busyAfterAccept) this.busy = 'session running';
    },
    answered: (txId: string): void => {
      this.answered.push({ txId, loggedBefore: this.logLines.some((l) => l.includes(txId)) });
    },
  };
}

export interface Fixture {
  endpoint: StartEndpoint;
  payment: FakePaymentSide;
  /** Every log line written so far, raw. */
  logLines: string[];
  close(): Promise<void>;
}

export interface FixtureOptions {
  start?: Partial<QrvendConfig['start']>;
  limits?: Partial<StartServerLimits>;
  now?: () => number;
  logLevel?: 'trace' | 'info';
}

export async function startFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l.length > 0),
      );
      done();
    },
  });
  const payment = new FakePaymentSide();
  payment.logLines = logLines;
  const endpoint = await startStartEndpoint({
    start: startConfig(options.start),
    acceptedTerminalIds: [TERMINAL_ID],
    acceptedUniQr: [UNI_QR],
    secretToken: Buffer.from(TOKEN),
    hooks: payment.hooks,
    log: createLogger({ level: options.logLevel ?? 'trace', destination }),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  return { endpoint, payment, logLines, close: () => endpoint.close() };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed and checked against the protocol's StartResponseSchema (throws if invalid). */
  json: StartResponse;
}

export interface PostOptions {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  localAddress?: string;
}

/** One request over a fresh loopback connection. `body` objects are sent as JSON. */
export function post(endpoint: StartEndpoint, body: unknown, options: PostOptions = {}): Promise<Reply> {
  const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const url = new URL(options.path ?? new URL(endpoint.url).pathname, endpoint.origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: options.method ?? 'POST',
        agent: false,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(payload),
          ...options.headers,
        },
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseResponse(text) });
          } catch (err) {
            reject(err);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Parses a response body and checks it against the response schema. */
export function parseResponse(text: string): StartResponse {
  const parsed = StartResponseSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`response not valid against StartResponseSchema: ${text.slice(0, 300)}`);
  return parsed.data;
}

export interface RawReply {
  status: number;
  head: string;
  body: string;
}

/** Parses the first HTTP response in `raw` (Content-Length framed, as the endpoint always sends). */
export function parseRawResponse(raw: Buffer): RawReply | null {
  // Skip interim answers (100 Continue): they have no body.
  while (/^HTTP\/1\.1 1\d\d /.test(raw.subarray(0, 13).toString('latin1'))) {
    const end = raw.indexOf('\r\n\r\n');
    if (end === -1) return null;
    raw = raw.subarray(end + 4);
  }
  const split = raw.indexOf('\r\n\r\n');
  if (split === -1) return null;
  const head = raw.subarray(0, split).toString('latin1');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? NaN);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
  const body = raw.subarray(split + 4);
  if (Number.isNaN(length) || body.length < length) return null;
  return { status, head, body: body.subarray(0, length).toString('utf8') };
}

/**
 * A raw TCP client: write what you want, when you want, and wait for the first response.
 * `response` resolves with the first complete response, or null if the server closed first.
 */
export function rawClient(endpoint: StartEndpoint): {
  socket: Socket;
  response: Promise<RawReply | null>;
  closed: Promise<void>;
} {
  const socket = connect(endpoint.port, '127.0.0.1');
  let received = Buffer.alloc(0);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const response = new Promise<RawReply | null>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const reply = parseRawResponse(received);
      if (reply) resolve(reply);
    });
    socket.on('error', () => undefined); // a reset after the answer is expected when we stop reading
    socket.once('close', () => resolve(parseRawResponse(received)));
  });
  return { socket, response, closed };
}

export function startPath(integratorName = INTEGRATOR): string {
  return `/payment/v2/transactions/Gateway/${integratorName}/start`;
}
