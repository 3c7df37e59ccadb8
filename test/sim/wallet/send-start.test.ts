/**
 * The wallet simulator against a real loopback HTTP server standing in for qrvend's Start
 * endpoint: the path, the body it sends, how answers are classified, the CLI's exit codes,
 * and that the SecretToken is printed nowhere.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { declinedStatus, validateStartRequest } from '../../../src/gateway/protocol/index.js';
import { sendStart } from '../../../src/sim/wallet/index.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MAIN = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const TOKEN = 'S'.repeat(32) + 'e'.repeat(32);
const T = { timeout: TEST_DEADLINE_MS };

/** Runs the CLI without blocking this process (the stand-in server lives here). */
function runCli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

interface Seen {
  path: string;
  body: Record<string, unknown>;
}

describe('wallet simulator', () => {
  let server: http.Server;
  let url = '';
  const seen: Seen[] = [];
  /** The stand-in endpoint: validates like qrvend, answers by TransactionId prefix. */
  before(async () => {
    server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        const body = JSON.parse(text) as Record<string, unknown>;
        seen.push({ path: req.url ?? '', body });
        const send = (status: number, answer: unknown, raw?: string) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(raw ?? JSON.stringify(answer));
        };
        const checked = validateStartRequest(body);
        if (!checked.ok) return send(400, { Status: declinedStatus(checked.code, checked.message) });
        if (checked.value.SecretToken !== TOKEN)
          return send(401, { Status: declinedStatus(998, 'SecretToken is not valid') });
        const id = checked.value.TransactionId;
        if (id.startsWith('garbage')) return send(200, null, '<html>oops</html>');
        if (id.startsWith('dup'))
          return send(200, { Status: declinedStatus(996, 'TransactionId already used'), TransactionId: id });
        return send(200, {
          Status: { Verdict: 'Approved' },
          TransactionId: id,
          ConsumerData: checked.value.ConsumerData ?? undefined,
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the Start to /payment/v2/transactions/Gateway/{integrator}/start with the members given', T, async () => {
    const r = await sendStart({
      url,
      integratorName: 'acme',
      secretToken: TOKEN,
      uniQr: 'QR-1',
      balance: 12.5,
      consumerData: { a: 1 },
    });
    assert.equal(r.outcome.kind, 'approved');
    const last = seen.at(-1)!;
    assert.equal(last.path, '/payment/v2/transactions/Gateway/acme/start');
    assert.deepEqual(Object.keys(last.body).sort(), [
      'AppUserId',
      'Balance',
      'ConsumerData',
      'SecretToken',
      'TransactionId',
      'UniQR',
    ]);
    assert.equal(last.body.TransactionId, r.transactionId);
    assert.ok(r.transactionId.length >= 8 && r.transactionId.length <= 40);
    assert.ok(!JSON.stringify(r).includes(TOKEN), 'the result never carries the token');
  });

  it('classifies Declined (200 or 4xx with a Status) and a garbled answer', T, async () => {
    const dup = await sendStart({
      url,
      integratorName: 'acme',
      secretToken: TOKEN,
      terminalId: 'T1',
      transactionId: 'dup-000001',
    });
    assert.equal(dup.outcome.kind, 'declined');
    if (dup.outcome.kind === 'declined') assert.equal(dup.outcome.code, 996);
    const wrongToken = await sendStart({ url, integratorName: 'acme', secretToken: 'x'.repeat(64), terminalId: 'T1' });
    assert.equal(wrongToken.outcome.kind, 'declined');
    const garbage = await sendStart({
      url,
      integratorName: 'acme',
      secretToken: TOKEN,
      terminalId: 'T1',
      transactionId: 'garbage-01',
    });
    assert.equal(garbage.outcome.kind === 'transport' && garbage.outcome.failure, 'not-json');
  });

  it('the CLI exits 0 on Approved, 1 on Declined, 69 without an answer, and never prints the token', T, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-wallet-'));
    try {
      const tokenFile = join(dir, 'token');
      writeFileSync(tokenFile, `${TOKEN}\n`);
      const run = (...args: string[]) =>
        runCli(['sim', 'wallet', '--integrator', 'acme', '--token-file', tokenFile, ...args]);
      const ok = await run('--url', url, '--terminal-id', 'T1', '--balance', '3.5', '--app-user-id', 'u-77');
      assert.equal(ok.status, 0, ok.stderr);
      assert.match(ok.stdout, /Approved/);
      assert.equal(seen.at(-1)?.body.AppUserId, 'u-77');
      const declined = await run('--url', url, '--uni-qr', 'Q', '--transaction-id', 'dup-000002');
      assert.equal(declined.status, 1, declined.stderr);
      assert.match(declined.stdout, /Declined\s+code 996/);
      const json = await run('--url', url, '--uni-qr', 'Q', '--json');
      assert.equal((JSON.parse(json.stdout) as { outcome: { kind: string } }).outcome.kind, 'approved');
      const down = await run('--url', 'http://127.0.0.1:1', '--uni-qr', 'Q');
      assert.equal(down.status, 69, down.stderr);
      const usage = await run('--url', url);
      assert.equal(usage.status, 64, 'no machine named');
      const noFile = await runCli([
        'sim',
        'wallet',
        '--url',
        url,
        '--integrator',
        'a',
        '--token-file',
        join(dir, 'missing'),
        '--uni-qr',
        'Q',
      ]);
      assert.equal(noFile.status, 78);
      for (const r of [ok, declined, json, down, usage, noFile]) {
        assert.ok(!r.stdout.includes(TOKEN) && !r.stderr.includes(TOKEN), 'the token is never printed');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
