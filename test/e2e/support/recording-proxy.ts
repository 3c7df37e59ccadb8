/**
 * A recording pass-through between the daemon and the gateway simulator, on loopback.
 *
 * The simulator's ledger says what it decided; end-to-end tests also need to see the exact bytes
 * the daemon sent (PollingAttemptCounter, IsLastPolling, PaymentInfo echoed unchanged, the body of
 * every retry) and what the gateway answered. The proxy forwards each request untouched, records
 * both sides, and passes transport failures through as they happened: an upstream reset becomes a
 * reset toward the daemon, a hung upstream keeps the daemon waiting until its own timeout.
 *
 * `hangWhen` lets a test make one precise request go unanswered (e.g. only the Inquiry flagged
 * IsLastPolling), something a rate-based fault cannot aim at. Such a request never reaches the
 * simulator, like the simulator's own `hang` fault ("before": nothing processed).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ProxiedOp = 'Authorization' | 'Settlement' | 'Cancel' | 'GenerateQR' | 'Inquiry' | 'Void';

export interface Exchange {
  op: ProxiedOp | null;
  path: string;
  requestText: string;
  /** Parsed request body (null when it was not JSON). */
  request: Record<string, any> | null;
  /**
   * What happened to it: answered (any HTTP status), reset upstream, held by hangWhen, or dropped by the daemon first.
   */
  fate: 'answered' | 'reset' | 'held' | 'aborted' | 'pending';
  status: number | null;
  responseText: string | null;
  /** Parsed response body (null when there was none or it was not JSON). */
  response: Record<string, any> | null;
  /** When the whole request had arrived (Date.now()): the daemon stamped it before that. */
  receivedAtMs: number;
}

export interface RecordingProxy {
  readonly url: string;
  /** Where requests go (the gateway simulator's url); set before the daemon sends anything. */
  setUpstream(url: string): void;
  /** Requests for which this returns true are held unanswered (the daemon times out). */
  hangWhen(predicate: ((op: ProxiedOp | null, body: Record<string, any> | null) => boolean) | null): void;
  /** Every exchange so far, oldest first. */
  exchanges(): Exchange[];
  /** Exchanges of one operation for one TransactionId, oldest first. */
  of(op: ProxiedOp, transactionId: string): Exchange[];
  close(): Promise<void>;
}

const OPS: readonly ProxiedOp[] = ['Authorization', 'Settlement', 'Cancel', 'GenerateQR', 'Inquiry', 'Void'];

function opOf(path: string): ProxiedOp | null {
  const last = path.split('/').pop() ?? '';
  return (OPS as readonly string[]).includes(last) ? (last as ProxiedOp) : null;
}

function parse(text: string | null): Record<string, any> | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' ? (v as Record<string, any>) : null;
  } catch {
    return null;
  }
}

export async function startRecordingProxy(): Promise<RecordingProxy> {
  let upstream: URL | null = null;
  let hangPredicate: ((op: ProxiedOp | null, body: Record<string, any> | null) => boolean) | null = null;
  const log: Exchange[] = [];
  const sockets = new Set<Socket>();

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://proxy').pathname;
      const requestText = Buffer.concat(chunks).toString('utf8');
      const ex: Exchange = {
        op: opOf(path),
        path,
        requestText,
        request: parse(requestText),
        fate: 'pending',
        status: null,
        responseText: null,
        response: null,
        receivedAtMs: Date.now(),
      };
      log.push(ex);
      if (hangPredicate?.(ex.op, ex.request)) {
        ex.fate = 'held';
        return; // the daemon's timeout ends it; closing the socket then frees everything
      }
      if (upstream === null) {
        res.writeHead(502).end('no upstream');
        ex.fate = 'answered';
        ex.status = 502;
        return;
      }
      const out = http.request(
        new URL(req.url ?? '/', upstream),
        { method: req.method, headers: { ...req.headers, host: upstream.host }, agent: false },
        (up) => {
          const body: Buffer[] = [];
          up.on('data', (c: Buffer) => body.push(c));
          up.on('end', () => {
            const text = Buffer.concat(body).toString('utf8');
            ex.fate = 'answered';
            ex.status = up.statusCode ?? null;
            ex.responseText = text;
            ex.response = parse(text);
            const headers = { ...up.headers };
            delete headers['transfer-encoding'];
            headers['content-length'] = String(Buffer.byteLength(text));
            res.writeHead(up.statusCode ?? 502, headers).end(text);
          });
          up.on('error', () => {
            ex.fate = 'reset';
            res.socket?.resetAndDestroy();
          });
        },
      );
      out.on('error', () => {
        if (ex.fate !== 'pending') return;
        ex.fate = 'reset';
        res.socket?.resetAndDestroy();
      });
      // The daemon gave up (its timeout): drop the upstream request too, so a hung simulator
      // request is released and nothing outlives the test.
      res.on('close', () => {
        if (ex.fate === 'pending') {
          ex.fate = 'aborted';
          out.destroy();
        }
      });
      out.end(requestText);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    setUpstream(url) {
      upstream = new URL(url);
    },
    hangWhen(predicate) {
      hangPredicate = predicate;
    },
    exchanges: () => log.map((e) => ({ ...e })),
    of: (op, transactionId) =>
      log.filter((e) => e.op === op && e.request?.BasicInfo?.TransactionId === transactionId).map((e) => ({ ...e })),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
