/**
 * A webhook receiver on loopback for the tests: it verifies each request with the standardwebhooks
 * package (an implementation that is not the console's) and keeps what it got. `answer` decides
 * each reply (a status, a redirect, or never answering).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  timestamp: number;
  signature: string;
  body: string;
  /** What standardwebhooks' verify said: null when the signature held, else its error. */
  verifyError: string | null;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
}

/** A status (after `delayMs`), a redirect, or no answer at all. */
export type Answer = { status: number; location?: string; delayMs?: number } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** Decides the answer to the n-th request (0-based). */
  answer: (n: number, r: Received) => Answer;
  secret: string;
  /** Requests that came while another with the same webhook-id was still open (two attempts at once). */
  overlaps: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** `verifyAt` lets a test with an injected clock verify at the time of the attempt, not the real now. */
export async function startReceiver(secret: string, verifyAt?: () => number): Promise<Receiver> {
  const hanging: ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => ({ status: 204 }),
    secret,
    overlaps: 0,
    close: async () => undefined,
  };
  const open = new Map<string, number>();
  const server: Server = createServer(async (req, res) => {
    const openId = String(req.headers['webhook-id'] ?? '');
    const already = open.get(openId) ?? 0;
    if (already > 0) receiver.overlaps++;
    open.set(openId, already + 1);
    res.on('close', () => open.set(openId, (open.get(openId) ?? 1) - 1));
    const body = await readBody(req);
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    let verifyError: string | null = null;
    try {
      const wh = new Webhook(receiver.secret);
      if (verifyAt === undefined) wh.verify(body, headers);
      else {
        // The same check at the attempt's time: the signature the library computes must be one sent.
        const expected = wh.sign(headers['webhook-id'], new Date(Number(headers['webhook-timestamp']) * 1000), body);
        if (!headers['webhook-signature'].split(' ').includes(expected)) throw new Error('signature mismatch');
        if (Math.abs(verifyAt() / 1000 - Number(headers['webhook-timestamp'])) > 300)
          throw new Error('stale timestamp');
      }
    } catch (err) {
      verifyError = (err as Error).message;
    }
    const r: Received = {
      id: headers['webhook-id'],
      timestamp: Number(headers['webhook-timestamp']),
      signature: headers['webhook-signature'],
      body,
      verifyError,
      json: JSON.parse(body),
    };
    receiver.received.push(r);
    const answer = receiver.answer(receiver.received.length - 1, r);
    if (answer === 'hang') {
      hanging.push(res);
      return;
    }
    if (answer.location !== undefined) res.setHeader('Location', answer.location);
    const reply = () => res.writeHead(answer.status).end('answer body');
    if (answer.delayMs === undefined) reply();
    else setTimeout(reply, answer.delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  receiver.url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/hook`;
  receiver.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}
