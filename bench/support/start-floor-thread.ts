/**
 * The worker of the Static Start floor (start-floor-process.ts): what the payment worker must do for a
 * Start, with nothing of qrvend's own: the Start read on `node:http` and parsed, a commit (the
 * ledger's pragmas, a row and an event, fsynced), the answer, the Authorization posted on a
 * kept-alive `node:http` Agent, its answer read and parsed, a second commit, and the machine
 * loop told. No checks, no schema, no got, no log line: the hops and syncs any agent pays.
 */
import Database from 'better-sqlite3';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { applyDurabilityPragmas } from '../../src/ledger/db.js';

export interface StartFloorThreadData {
  dir: string;
  gatewayUrl: string;
  /** Path of the Authorization at the gateway (the proxy notes the operation from its last part). */
  authorizationPath: string;
  funds: number;
}

export type StartFloorThreadMessage = { kind: 'listening'; port: number } | { kind: 'begin'; funds: number };

/** A Start or an Authorization answer longer than this is not one: dropped. */
const MAX_BODY_BYTES = 64 * 1024;

const APPROVED = Buffer.from(JSON.stringify({ Status: { Code: 0, Message: 'Approved' } }));

const data = workerData as StartFloorThreadData;
const port = parentPort!;
const post = (m: StartFloorThreadMessage) => port.postMessage(m);
const gateway = new URL(data.gatewayUrl);
// The agent's own Agent settings (src/gateway/client.ts): kept alive, idle sockets dropped at 15 s.
const agent = new http.Agent({ keepAlive: true, timeout: 15_000 });

const db = new Database(join(data.dir, 'start-floor.sqlite'));
applyDurabilityPragmas(db);
db.exec(
  'CREATE TABLE IF NOT EXISTS tx (id TEXT PRIMARY KEY, state INTEGER NOT NULL, body TEXT NOT NULL); ' +
    'CREATE TABLE IF NOT EXISTS ev (id INTEGER PRIMARY KEY, tx TEXT NOT NULL, body TEXT NOT NULL)',
);
const insertTx = db.prepare<[string, string]>('INSERT INTO tx (id, state, body) VALUES (?, 1, ?)');
const advanceTx = db.prepare<[string, string]>('UPDATE tx SET state = 2, body = ? WHERE id = ?');
const insertEvent = db.prepare<[string, string]>('INSERT INTO ev (tx, body) VALUES (?, ?)');
const accepted = db.transaction((txId: string, text: string) => {
  insertTx.run(txId, text);
  insertEvent.run(txId, text);
});
const authorized = db.transaction((txId: string, text: string) => {
  advanceTx.run(text, txId);
  insertEvent.run(txId, text);
});

function readBody(stream: http.IncomingMessage, done: (text: string | null) => void): void {
  const parts: Buffer[] = [];
  let size = 0;
  stream.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= MAX_BODY_BYTES) parts.push(c);
  });
  stream.on('end', () => done(size <= MAX_BODY_BYTES ? Buffer.concat(parts).toString('utf8') : null));
  stream.on('error', () => done(null));
}

function authorize(txId: string): void {
  const body = JSON.stringify({ BasicInfo: { TransactionId: txId } });
  const req = http.request(
    {
      host: gateway.hostname,
      port: gateway.port,
      path: data.authorizationPath,
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    },
    (res) =>
      readBody(res, (text) => {
        if (text === null) return;
        try {
          JSON.parse(text);
        } catch {
          // the simulator's answer to this bare body need not be JSON: the floor times the hop only
        }
        authorized.immediate(txId, text);
        post({ kind: 'begin', funds: data.funds });
      }),
  );
  // Said, not swallowed: the bench would otherwise only see no C,START and time out.
  req.on('error', (err) => process.stderr.write(`start-floor: the Authorization of ${txId} failed: ${err.message}\n`));
  req.end(body);
}

const server = http.createServer((req, res) => {
  readBody(req, (text) => {
    let txId = '';
    try {
      txId = String((JSON.parse(text ?? '') as { TransactionId?: unknown }).TransactionId ?? '');
    } catch {
      // not JSON
    }
    if (txId === '') {
      res.writeHead(400).end();
      return;
    }
    accepted.immediate(txId, text!);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': APPROVED.length, connection: 'close' });
    res.end(APPROVED);
    authorize(txId);
  });
});

port.on('message', (m: { kind: 'close' }) => {
  if (m.kind !== 'close') return;
  server.closeAllConnections();
  server.close(() => {
    agent.destroy();
    db.close();
    port.close();
  });
});
server.listen(0, '127.0.0.1', () => post({ kind: 'listening', port: (server.address() as AddressInfo).port }));
