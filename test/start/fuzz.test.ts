/**
 * Property-based fuzzing of the Start endpoint (docs/decisions/reliability-suite.md): bodies, headers, paths, methods.
 * Properties: no crash, no 5xx, every answer valid against StartResponseSchema, and the payment
 * side is reached exactly when the request is valid (never for an invalid one).
 *
 * Most cases run in-process against the same exchange the server uses (fast); a sample runs over
 * real loopback HTTP, raw bytes on a socket, so the parser, body reading and socket handling are
 * fuzzed too. QRVEND_FUZZ_RUNS sets the in-process count (default 2,000 for `npm test`;
 * `npm run fuzz` uses 100,000); the HTTP sample is a fiftieth of it, between 200 and 2,000.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createLogger } from '../../src/core/log.js';
import { StartResponseSchema, type StartRequest } from '../../src/gateway/protocol/start.js';
import { serialize } from '../../src/start/answers.js';
import { createStartExchange } from '../../src/start/exchange.js';
import { createSecretMatcher } from '../../src/start/secret-compare.js';
import { fuzzCase, shouldAccept, type FuzzCase } from './fuzz-cases.js';
import { Writable } from 'node:stream';
import { startStartEndpoint } from '../../src/start/index.js';
import { INTEGRATOR, TERMINAL_ID, TOKEN, UNI_QR, rawClient, startConfig } from './helpers.js';

const RUNS = Math.max(1, Number(process.env['QRVEND_FUZZ_RUNS'] ?? 2_000) || 2_000);
const HTTP_RUNS = Math.min(2_000, Math.max(200, Math.ceil(RUNS / 50)));
const MAX_BODY = 16_384;
/** A fixed seed unless one is given, so a failure in CI is reproducible. */
const SEED = process.env['QRVEND_FUZZ_SEED'] === undefined ? 20261121 : Number(process.env['QRVEND_FUZZ_SEED']);

/** The fake payment side of the fuzz: remembers what it accepted, refuses what it is told to. */
function fuzzPaymentSide() {
  const seen = new Set<string>();
  const side = {
    seen,
    calls: 0,
    current: null as FuzzCase | null,
    hooks: {
      readerBusy: () => side.current?.busy ?? null,
      transactionSeen: (txId: string) => seen.has(txId),
      accept: async (request: StartRequest) => {
        side.calls += 1;
        if (side.current?.failAccept) throw new Error('fuzz: accept refused');
        seen.add(request.TransactionId);
      },
    },
  };
  return side;
}

function assertValidAnswer(text: string, status: number): void {
  assert.ok(status < 500, `HTTP ${status}`);
  const parsed = StartResponseSchema.safeParse(JSON.parse(text));
  assert.ok(parsed.success, `answer not valid against StartResponseSchema: ${text.slice(0, 200)}`);
  assert.ok(!text.includes(TOKEN), 'the answer contains the SecretToken');
}

test(`fuzz in-process: ${RUNS} generated requests`, { timeout: 600_000 }, async (t) => {
  const side = fuzzPaymentSide();
  let clock = 0;
  const exchange = createStartExchange({
    integratorName: INTEGRATOR,
    acceptedTerminalIds: [TERMINAL_ID],
    acceptedUniQr: [UNI_QR],
    secret: createSecretMatcher(Buffer.from(TOKEN)),
    hooks: side.hooks,
    maxBodyBytes: MAX_BODY,
    rateLimit: { perSecond: 20, burst: 40 },
    now: () => clock,
  });
  const started = performance.now();
  const tally = { accepted: 0, byCode: new Map<string, number>() };
  await fc.assert(
    fc.asyncProperty(fuzzCase, async (c) => {
      clock += 1_000; // a second between cases: the rate limit never interferes here
      side.current = c;
      const expectAccept = shouldAccept(c, side.seen, MAX_BODY);
      const callsBefore = side.calls;
      const answer = await exchange.answer(
        { method: c.method, url: c.path, headers: c.headers, client: '127.0.0.1' },
        c.body,
      );
      assertValidAnswer(serialize(answer), answer.httpStatus);
      const called = side.calls - callsBefore;
      assert.equal(called, expectAccept ? 1 : 0, `accept called ${called} times, expected ${expectAccept ? 1 : 0}`);
      const approved = answer.body.Status.Verdict === 'Approved';
      assert.equal(approved, expectAccept && !c.failAccept);
      const key = approved ? 'Approved' : `${answer.httpStatus}/${answer.body.Status.Code}`;
      tally.byCode.set(key, (tally.byCode.get(key) ?? 0) + 1);
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
  );
  const seconds = (performance.now() - started) / 1000;
  t.diagnostic(
    `${RUNS} cases in ${seconds.toFixed(1)} s; answers: ` +
      `${JSON.stringify(Object.fromEntries([...tally.byCode].sort()))}`,
  );
  // The generator must reach every check, or the property proves little.
  for (const key of [
    'Approved',
    '200/998',
    '200/997',
    '200/9',
    '200/50',
    '200/996',
    '200/30',
    '200/6',
    '404/998',
    '405/998',
    '415/998',
    '413/998',
  ]) {
    assert.ok((tally.byCode.get(key) ?? 0) > 0 || RUNS < 1_000, `no case reached ${key}`);
  }
});

/** The request as bytes on the wire; the body may be cut short or the head may be garbage. */
function wire(c: FuzzCase, garbage: string | null): Buffer {
  if (garbage !== null) return Buffer.from(garbage, 'latin1');
  const head = [
    `${c.method} ${c.path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Connection: close',
    ...Object.entries(c.headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1'), c.body]);
}

test(`fuzz over loopback HTTP: ${HTTP_RUNS} generated requests`, { timeout: 600_000 }, async (t) => {
  let clock = 0;
  const logLines: string[] = [];
  const side = fuzzPaymentSide();
  const endpoint = await startStartEndpoint({
    start: startConfig({ maxBodyBytes: MAX_BODY }),
    acceptedTerminalIds: [TERMINAL_ID],
    acceptedUniQr: [UNI_QR],
    secretToken: Buffer.from(TOKEN),
    hooks: side.hooks,
    log: createLogger({
      level: 'trace',
      destination: new Writable({ write: (chunk: Buffer, _e, done) => (logLines.push(chunk.toString()), done()) }),
    }),
    limits: { bodyTimeoutMs: 150, headersTimeoutMs: 300, lingerMs: 200 },
    now: () => clock,
  });
  const started = performance.now();
  const garbageHead = fc.oneof(
    { arbitrary: fc.constant(null), weight: 15 },
    { arbitrary: fc.string({ maxLength: 200, unit: 'binary-ascii' }).map((s) => `${s}\r\n\r\n`), weight: 1 },
    {
      arbitrary: fc
        .tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 60 }))
        .map(([m, p]) => `${m} ${p} HTTP/1.1\r\nHost: x\r\n\r\n`),
      weight: 1,
    },
  );
  try {
    await fc.assert(
      fc.asyncProperty(fuzzCase, garbageHead, fc.integer({ min: 0, max: 39 }), async (c, garbage, cut) => {
        clock += 1_000;
        side.current = c;
        let bytes = wire(c, garbage);
        // One case in forty stops sending part-way: the body deadline must answer it.
        if (cut === 0 && garbage === null && c.body.length > 1) bytes = bytes.subarray(0, bytes.length - 1);
        const callsBefore = side.calls;
        // Node answers an Expect other than 100-continue itself (417, via our checkExpectation).
        const expect = c.headers['expect'];
        const expectRefused = expect !== undefined && !/(?:^|\W)100-continue(?:$|\W)/i.test(expect);
        const expectAccept = garbage === null && cut !== 0 && !expectRefused && shouldAccept(c, side.seen, MAX_BODY);
        const { socket, response } = rawClient(endpoint);
        socket.write(bytes);
        const reply = await response;
        socket.destroy();
        assert.ok(reply, 'the server closed without an answer');
        assertValidAnswer(reply.body, reply.status);
        const called = side.calls - callsBefore;
        // Over the wire the oracle decides only for well-formed requests; garbage must never reach accept.
        if (garbage !== null || cut === 0) assert.equal(called, 0);
        else if (!/[\r\n\0]/.test(Object.values(c.headers).join('') + c.path)) {
          assert.equal(
            called,
            expectAccept ? 1 : 0,
            `accept called ${called} times; answer ${reply.status} ` +
              `${reply.body.slice(0, 160)}; headers ${JSON.stringify(c.headers)}`,
          );
        }
      }),
      { numRuns: HTTP_RUNS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
    );
  } finally {
    await endpoint.close();
  }
  const seconds = (performance.now() - started) / 1000;
  t.diagnostic(
    `${HTTP_RUNS} HTTP cases in ${seconds.toFixed(1)} s; stats: ${JSON.stringify(endpoint.stats().byHttpStatus)}`,
  );
  assert.ok(!logLines.some((l) => l.includes(TOKEN)), 'a log line contains the SecretToken');
});
