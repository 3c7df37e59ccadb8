/**
 * The Static Start floor (bench/start-floor.ts, support/start-floor-process.ts) does, for real, what
 * it claims to be the least an agent does for a Start: the answer, two commits on disk with the
 * ledger's pragmas, the Authorization at the gateway carrying the TransactionId, then C,START read
 * by the VMC simulator on its pty. If it did less, the figure beyond it would flatter the daemon.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StartFloor } from '../../bench/start-floor.js';
import { nextCommand } from '../../bench/support/vmc.js';
import { OPERATIONS } from '../../src/gateway/protocol/index.js';
import { LEDGER_PAGE_SIZE } from '../../src/ledger/db.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

interface Seen {
  path: string;
  body: string;
}

async function gateway(): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', body: Buffer.concat(parts).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"Status":{"Code":0}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function post(url: string, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
    signal: AbortSignal.timeout(5000),
  });
  return { status: res.status, text: await res.text() };
}

test(
  'a Start is answered, committed twice, authorized at the ' +
    'gateway with its TransactionId, then C,START reaches the VMC',
  T,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-start-floor-'));
    const gw = await gateway();
    const floor = await StartFloor.start(gw.url, dir);
    try {
      const started = nextCommand(floor.sim, (c) => c.kind === 'start', 10_000, 'C,START');
      const answer = await post(
        floor.startUrl,
        JSON.stringify({ AppUserId: 'u', SecretToken: 's', TransactionId: 'tx-floor-1' }),
      );
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(answer.text), { Status: { Code: 0, Message: 'Approved' } });
      const { command } = await started;
      assert.deepEqual(command, { kind: 'start', funds: 10 });
      assert.deepEqual(
        gw.seen.map((s) => s.path),
        [OPERATIONS.Authorization.path],
      );
      assert.equal(
        (JSON.parse(gw.seen[0]!.body) as { BasicInfo: { TransactionId: string } }).BasicInfo.TransactionId,
        'tx-floor-1',
      );
      const peek = new Database(join(dir, 'start-floor.sqlite'), { readonly: true });
      try {
        assert.equal(peek.pragma('journal_mode', { simple: true }), 'wal');
        assert.equal(
          peek.pragma('page_size', { simple: true }),
          LEDGER_PAGE_SIZE,
          "the ledger's pragmas (applyDurabilityPragmas)",
        );
        assert.deepEqual(
          peek.prepare('SELECT id, state FROM tx').all(),
          [{ id: 'tx-floor-1', state: 2 }],
          'the second commit moved the row on',
        );
        assert.deepEqual(peek.prepare('SELECT count(*) AS n FROM ev').get(), { n: 2 });
      } finally {
        peek.close();
      }
    } finally {
      await floor.stop();
      await gw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('a body without a TransactionId is refused (400) and authorizes nothing', T, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-start-floor-'));
  const gw = await gateway();
  const floor = await StartFloor.start(gw.url, dir);
  try {
    assert.equal((await post(floor.startUrl, '{"AppUserId":"u"}')).status, 400);
    assert.equal((await post(floor.startUrl, 'not json')).status, 400);
    // A Start after them still goes through: the refusals did not wedge the floor.
    const started = nextCommand(floor.sim, (c) => c.kind === 'start', 10_000, 'C,START');
    assert.equal((await post(floor.startUrl, '{"TransactionId":"tx-floor-2"}')).status, 200);
    await started;
    assert.deepEqual(
      gw.seen.map((s) => (JSON.parse(s.body) as { BasicInfo: { TransactionId: string } }).BasicInfo.TransactionId),
      ['tx-floor-2'],
    );
  } finally {
    await floor.stop();
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
