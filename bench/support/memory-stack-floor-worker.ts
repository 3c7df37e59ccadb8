/**
 * The payment-side worker of the stack floor (memory-stack-floor.ts): the libraries qrvend's
 * payment worker is made of, each loaded and used once the way the product uses it, and nothing
 * of qrvend's own. better-sqlite3: a WAL file with one synced commit; got: POSTs to a loopback
 * server on a kept-alive Agent; zod: a schema parsing the answer; pino: a line to /dev/null. The
 * ICU deferral the payment worker installs for got's dependency is installed here too, or the
 * floor would carry 4 MB of ICU data the daemon does not. `without` leaves libraries out, for
 * what each one costs (BENCHMARKS.md).
 */
import '../../src/daemon/payment-worker-preload.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { quietCollector } from '../../src/daemon/heap-limits.js';

export type StackLibrary = 'better-sqlite3' | 'got' | 'zod' | 'pino';
const { dir, without } = workerData as { dir: string; without: StackLibrary[] };
const use = (name: StackLibrary) => !without.includes(name);

if (use('better-sqlite3')) {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(join(dir, 'stack-floor.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('cache_size = -2000');
  db.exec('CREATE TABLE IF NOT EXISTS tx (id TEXT PRIMARY KEY, body TEXT NOT NULL)');
  db.transaction(() => db.prepare('INSERT OR REPLACE INTO tx (id, body) VALUES (?, ?)').run('floor', '{}')).immediate();
}

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () =>
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"Status":{"Code":0,"Message":"Approved"}}'),
  );
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/Authorization`;
const agent = new http.Agent({ keepAlive: true });
const post = use('got') ? await gotPost() : nodePost;
const check = use('zod') ? await zodCheck() : (answer: unknown) => answer;
const log = use('pino') ? await pinoLine() : () => {};
for (let i = 0; i < 3; i++) log(check(JSON.parse(await post(url, '{"BasicInfo":{}}'))));
agent.destroy();
server.closeAllConnections();
await new Promise<void>((resolve) => server.close(() => resolve()));
// Rests as the daemon's threads do after a session: one compacting collection, malloc trimmed.
quietCollector(0).arm();
parentPort!.on('message', () => {});
parentPort!.postMessage('ready');

async function gotPost(): Promise<(url: string, body: string) => Promise<string>> {
  const { got } = await import('got');
  return async (u, body) =>
    (
      await got.post(u, {
        body,
        responseType: 'text',
        agent: { http: agent },
        retry: { limit: 0 },
        timeout: { request: 5000 },
      })
    ).body;
}

function nodePost(u: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(u, { method: 'POST', agent }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function zodCheck(): Promise<(answer: unknown) => unknown> {
  const { z } = await import('zod');
  const Answer = z.object({ Status: z.object({ Code: z.number().int(), Message: z.string().nullish() }) });
  return (answer) => Answer.parse(answer);
}

async function pinoLine(): Promise<(answer: unknown) => void> {
  const { pino } = await import('pino');
  const logger = pino(pino.destination('/dev/null'));
  return (answer) => logger.info({ answer }, 'stack floor: answer');
}
