/**
 * The Start endpoint's bounds over real loopback sockets: body size (declared and streamed),
 * slow bodies and heads, the per-client rate limit, garbage on the wire, HTTPS.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeclineCodes } from '../../src/gateway/protocol/codes.js';
import { parseResponse, post, rawClient, startFixture, startPath, validStart } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test('a declared Content-Length over the limit is refused with 413 before any body byte is sent', T, async () => {
  const fx = await startFixture({ start: { maxBodyBytes: 1024 } });
  try {
    const { socket, response } = rawClient(fx.endpoint);
    // Headers only: the server must answer without waiting for (or reading) the 10 MB.
    socket.write(
      `POST ${startPath()} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\n\r\n`,
    );
    const reply = await response;
    assert.ok(reply, 'no answer');
    assert.equal(reply.status, 413);
    assert.match(reply.head, /connection: close/i);
    const body = parseResponse(reply.body);
    assert.equal(body.Status.Code, DeclineCodes.ValidationError);
    socket.destroy();
    assert.equal(fx.payment.accepted.length, 0);
    assert.equal(fx.endpoint.stats().byHttpStatus['413'], 1);
  } finally {
    await fx.close();
  }
});

test('a chunked body is cut off with 413 as soon as it passes the limit, although it never ends', T, async () => {
  const fx = await startFixture({ start: { maxBodyBytes: 1024 } });
  try {
    const { socket, response } = rawClient(fx.endpoint);
    socket.write(
      `POST ${startPath()} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = 'x'.repeat(600);
    socket.write(`${(600).toString(16)}\r\n${chunk}\r\n`);
    socket.write(`${(600).toString(16)}\r\n${chunk}\r\n`); // 1200 bytes > 1024; no terminating chunk follows
    const reply = await response;
    assert.ok(reply, 'no answer');
    assert.equal(reply.status, 413);
    assert.equal(parseResponse(reply.body).Status.Verdict, 'Declined');
    socket.destroy();
    assert.equal(fx.payment.accepted.length, 0);
  } finally {
    await fx.close();
  }
});

test('a body exactly at the limit is read and judged', T, async () => {
  const fx = await startFixture({ start: { maxBodyBytes: 1024 } });
  try {
    const base = JSON.stringify(validStart());
    const padded = base.replace(/}$/, `${' '.repeat(1024 - Buffer.byteLength(base))}}`);
    assert.equal(Buffer.byteLength(padded), 1024);
    const reply = await post(fx.endpoint, padded);
    assert.equal(reply.status, 200);
    assert.equal(reply.json.Status.Verdict, 'Approved');
    const over = await post(fx.endpoint, `${padded} `);
    assert.equal(over.status, 413);
  } finally {
    await fx.close();
  }
});

test('a slow body is cut off with 408 (Declined 992) and the connection closed', T, async () => {
  const fx = await startFixture({ limits: { bodyTimeoutMs: 300 } });
  try {
    const { socket, response, closed } = rawClient(fx.endpoint);
    socket.write(
      `POST ${startPath()} HTTP/1.1\r\nHost: x\r\nContent-Type: ` +
        `application/json\r\nContent-Length: 200\r\n\r\n{"AppUserId":`,
    );
    const reply = await response; // and then nothing more is ever sent
    assert.ok(reply, 'no answer');
    assert.equal(reply.status, 408);
    assert.equal(parseResponse(reply.body).Status.Code, DeclineCodes.Timeout);
    await closed;
    assert.equal(fx.payment.accepted.length, 0);
  } finally {
    await fx.close();
  }
});

test('a slow request head is cut off with 408 and a Declined body', T, async () => {
  const fx = await startFixture({ limits: { headersTimeoutMs: 300 } });
  try {
    const { socket, response, closed } = rawClient(fx.endpoint);
    socket.write(`POST ${startPath()} HTTP/1.1\r\nHost: x\r\nContent-Ty`); // the head never completes
    const reply = await response;
    assert.ok(reply, 'no answer');
    assert.equal(reply.status, 408);
    assert.equal(parseResponse(reply.body).Status.Code, DeclineCodes.Timeout);
    await closed;
  } finally {
    await fx.close();
  }
});

test('garbage on the wire and oversized headers get 400/431 with a Declined body, never a crash', T, async () => {
  const fx = await startFixture();
  try {
    const cases: Array<[string, number]> = [
      ['\x00\x01\x02 not http at all\r\n\r\n', 400],
      [`POST ${startPath()} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`, 400],
      [`POST ${startPath()} HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`, 431],
    ];
    for (const [wire, status] of cases) {
      const { socket, response } = rawClient(fx.endpoint);
      socket.write(wire);
      const reply = await response;
      assert.ok(reply, `no answer to ${JSON.stringify(wire.slice(0, 30))}`);
      assert.equal(reply.status, status);
      assert.equal(parseResponse(reply.body).Status.Verdict, 'Declined');
      socket.destroy();
    }
    // Still serving.
    assert.equal((await post(fx.endpoint, validStart())).json.Status.Verdict, 'Approved');
  } finally {
    await fx.close();
  }
});

test('concurrent connections are bounded: one over the bound is dropped, the others are served', T, async () => {
  const fx = await startFixture({ limits: { maxConnections: 2 } });
  try {
    const holders = [rawClient(fx.endpoint), rawClient(fx.endpoint)];
    await Promise.all(holders.map(({ socket }) => new Promise((r) => socket.once('connect', r))));
    holders[0]!.socket.write(`POST ${startPath()} HTTP/1.1\r\nHost: x\r\n`); // both hold a slot with an unfinished head
    holders[1]!.socket.write(`POST ${startPath()} HTTP/1.1\r\nHost: x\r\n`);
    await new Promise((r) => setTimeout(r, 50)); // let the server register both connections
    const extra = rawClient(fx.endpoint);
    extra.socket.write(`POST ${startPath()} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`);
    assert.equal(await extra.response, null, 'the connection over the bound must be dropped unanswered');
    for (const h of holders) h.socket.destroy();
    await Promise.all(holders.map((h) => h.closed));
    // Slots free again: served. (Node frees the slot on the close event; retry briefly.)
    let reply = null;
    for (let i = 0; i < 50 && reply === null; i += 1) {
      reply = await post(fx.endpoint, validStart()).catch(() => null);
      if (reply === null) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(reply);
    assert.equal(reply.json.Status.Verdict, 'Approved');
  } finally {
    await fx.close();
  }
});

test(
  'rate limit: 10 requests a second are always served; a burst beyond the bound gets 429 and Declined 3',
  T,
  async () => {
    let nowMs = 0; // the rate limiter's clock, stepped by the test: no dependence on real speed
    const fx = await startFixture({ start: { rateLimit: { perSecond: 20, burst: 40 } }, now: () => nowMs });
    try {
      // 100 requests spaced 100 ms apart (10 per second for 10 simulated seconds): all served.
      for (let i = 0; i < 100; i += 1) {
        nowMs += 100;
        const reply = await post(fx.endpoint, validStart({ TerminalId: 'TERM-9999' }));
        assert.equal(reply.status, 200, `request ${i} at ${nowMs} ms`);
      }
      // After a 2 s pause the bucket is full again (40); 60 at the same instant: 40 served, 20 refused.
      nowMs += 2_000;
      const statuses: number[] = [];
      let refused: Awaited<ReturnType<typeof post>> | null = null;
      for (let i = 0; i < 60; i += 1) {
        const reply = await post(fx.endpoint, validStart());
        statuses.push(reply.status);
        if (reply.status === 429) refused = reply;
      }
      assert.equal(statuses.filter((s) => s === 200).length, 40);
      assert.equal(statuses.filter((s) => s === 429).length, 20);
      assert.ok(refused);
      assert.equal(refused.json.Status.Code, DeclineCodes.CountLimitExceeded);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      // Another client is not affected by the first one's limit.
      const other = await post(fx.endpoint, validStart(), { localAddress: '127.0.0.2' });
      assert.equal(other.status, 200);
      // After a pause the first client is served again.
      nowMs += 1_000;
      assert.equal((await post(fx.endpoint, validStart())).status, 200);
      assert.equal(fx.endpoint.stats().byHttpStatus['429'], 20);
    } finally {
      await fx.close();
    }
  },
);

test('the rate limit applies to wrong paths and methods too (probing is bounded)', T, async () => {
  const nowMs = 0;
  const fx = await startFixture({ start: { rateLimit: { perSecond: 1, burst: 3 } }, now: () => nowMs });
  try {
    const statuses = [];
    for (let i = 0; i < 5; i += 1)
      statuses.push((await post(fx.endpoint, '{}', { path: '/probe', method: 'GET' })).status);
    assert.deepEqual(statuses, [404, 404, 404, 429, 429]);
  } finally {
    await fx.close();
  }
});

test('Expect: 100-continue is answered only after the head passed its checks', T, async () => {
  const fx = await startFixture({ start: { maxBodyBytes: 1024 } });
  try {
    const { socket, response } = rawClient(fx.endpoint);
    socket.write(
      `POST ${startPath()} HTTP/1.1\r\nHost: x\r\nContent-Type: ` +
        `application/json\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n`,
    );
    const reply = await response;
    assert.ok(reply);
    assert.equal(reply.status, 413); // refused straight away: no "100 Continue" invites the body
    socket.destroy();
  } finally {
    await fx.close();
  }
});

function haveOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test(
  'HTTPS when start.certFile and start.keyFile are set',
  { ...T, skip: haveOpenssl() ? false : 'openssl not installed' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-start-tls-'));
    try {
      const certFile = join(dir, 'cert.pem');
      const keyFile = join(dir, 'key.pem');
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
          '-keyout',
          keyFile,
          '-out',
          certFile,
        ],
        { stdio: 'ignore' },
      );
      const fx = await startFixture({ start: { certFile, keyFile } });
      try {
        assert.match(
          fx.endpoint.url,
          /^https:\/\/127\.0\.0\.1:\d+\/payment\/v2\/transactions\/Gateway\/acme-wallet\/start$/,
        );
        const { readFileSync } = await import('node:fs');
        const body = JSON.stringify(validStart());
        const reply = await new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = httpsRequest(
            fx.endpoint.url,
            {
              method: 'POST',
              ca: readFileSync(certFile),
              agent: false,
              headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
            },
            (res) => {
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (c: string) => (text += c));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
        assert.equal(reply.status, 200);
        assert.equal(parseResponse(reply.text).Status.Verdict, 'Approved');
      } finally {
        await fx.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('a port already in use is a START_LISTEN_FAILED error naming the address', T, async () => {
  const fx = await startFixture();
  try {
    await assert.rejects(
      startFixture({ start: { listen: `127.0.0.1:${fx.endpoint.port}` } }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'START_LISTEN_FAILED');
        assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${fx.endpoint.port}`));
        return true;
      },
    );
  } finally {
    await fx.close();
  }
});
