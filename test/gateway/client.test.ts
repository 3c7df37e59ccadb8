/**
 * The gateway client against the gateway simulator over real loopback HTTP(S): verdicts, every
 * fault mode and its classification, a refused connection, byte-exact replay with sendRaw.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { createGatewayClient, type GatewayClient } from '../../src/gateway/client.js';
import { createRequestBuilders, paymentInfoFromGenerateQR } from '../../src/gateway/envelope.js';
import type { GatewayOutcome } from '../../src/gateway/outcome.js';
import { ReasonCodes } from '../../src/gateway/protocol/index.js';
import { encodeRequest, receivedPaymentInfo } from '../../src/gateway/wire/index.js';
import { startGatewaySimulator, type FaultKind, type GatewaySimulator } from '../../src/sim/gateway/index.js';
import { DEVICE, FIXED_NOW, sampleConfig } from './helpers.js';
import { makeSelfSignedCert } from './tls-fixture.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const TEST_TIMEOUT = { timeout: TEST_DEADLINE_MS };
const b = createRequestBuilders(sampleConfig(), DEVICE, FIXED_NOW);
let seq = 0;
const newTx = () => `client-test-${String(++seq).padStart(4, '0')}`;
/** What a closing request repeats from its authorization. */
const closes = { machineAuTime: '050326140709', ageLimit: null };

function expectKind<R>(o: GatewayOutcome<R>, kind: GatewayOutcome<R>['kind']): void {
  assert.equal(o.kind, kind, JSON.stringify(o));
}

describe('gateway client against the simulator (HTTP)', () => {
  let sim: GatewaySimulator;
  let client: GatewayClient;
  before(async () => {
    sim = await startGatewaySimulator({ hangMs: 10_000 });
    client = createGatewayClient({ baseUrl: sim.url, timeoutMs: 1_000, connectTimeoutMs: 1_000 });
  });
  after(async () => {
    client.close();
    await sim.close();
  });

  it('Authorization approved, then Settlement approved with PaymentInfo echoed', TEST_TIMEOUT, async () => {
    const txId = newTx();
    const auth = await client.authorization(b.authorization({ txId, amount: 5 }));
    expectKind(auth, 'approved');
    if (auth.kind !== 'approved') return;
    assert.equal(auth.response.PaymentInfo?.AuthAmount, 5);
    const paymentInfo = receivedPaymentInfo(auth)!;
    assert.match(
      paymentInfo.text,
      /"AuthAmount":5\.00,/,
      'the answer text is kept: the simulator writes the amount with decimals',
    );
    const settle = await client.settlement(
      b.settlement({
        txId,
        amount: 3,
        paymentInfo,
        products: [
          { item: 12, price: 1.5 },
          { item: 12, price: 1.5 },
        ],
        ...closes,
      }),
    );
    expectKind(settle, 'approved');
    assert.equal(sim.ledger().transactions[txId]?.state, 'settled');
  });

  it('a decline is classified with its code and message', TEST_TIMEOUT, async () => {
    const o = await client.authorization(b.authorization({ txId: newTx(), amount: 9.05 }));
    assert.equal(o.kind, 'declined');
    if (o.kind !== 'declined') return;
    assert.equal(o.code, 5);
    assert.match(o.message ?? '', /suspected fraud/);
  });

  it('a request the simulator refuses is a Declined 998 naming the member', TEST_TIMEOUT, async () => {
    const body = JSON.stringify({
      ...b.authorization({ txId: newTx(), amount: 5 }),
      BasicInfo: { TransactionId: 'x', Amount: 5, CurrencyCode: 'euro', CurrencyNumeric: '978' },
    });
    const o = await client.sendRaw('Authorization', body);
    assert.equal(o.kind, 'declined');
    if (o.kind === 'declined') {
      assert.equal(o.code, 998);
      assert.match(o.message ?? '', /BasicInfo\.CurrencyCode/);
    }
  });

  it(
    'Dynamic QR: GenerateQR (Code 0 is still Approved), Inquiry pending (993) then paid, Void',
    TEST_TIMEOUT,
    async () => {
      const txId = newTx();
      const products = [{ item: 12, price: 7.02 }]; // 7.02: paid after 2 pending polls
      const qr = await client.generateQR(b.generateQR({ txId, amount: 7.02, products }));
      expectKind(qr, 'approved');
      if (qr.kind !== 'approved') return;
      assert.ok(qr.response.QRCode);
      const pi = paymentInfoFromGenerateQR(qr.response, 7.02, 2);
      const answers: GatewayOutcome<unknown>[] = [];
      for (let attempt = 1; attempt <= 3; attempt++)
        answers.push(
          await client.inquiry(b.inquiry({ txId, amount: 7.02, paymentInfo: pi, attempt, isLast: false, products })),
        );
      assert.deepEqual(
        answers.map((a) => (a.kind === 'declined' ? a.code : a.kind)),
        [993, 993, 'approved'],
      );
      const paid = answers[2]!;
      if (paid.kind !== 'approved') return;
      const approvingPi = receivedPaymentInfo(paid as { response: { PaymentInfo?: unknown }; bodyText?: string })!;
      const v = await client.void(
        b.void({ txId, amount: 7.02, paymentInfo: approvingPi, reasonCode: ReasonCodes.CancelledByMachine, ...closes }),
      );
      expectKind(v, 'approved');
      assert.equal(sim.ledger().transactions[txId]?.state, 'voided');
    },
  );

  it('sendRaw replays the exact bytes: the simulator answers the duplicate identically', TEST_TIMEOUT, async () => {
    const txId = newTx();
    const auth = await client.authorization(b.authorization({ txId, amount: 5 }));
    assert.equal(auth.kind, 'approved');
    if (auth.kind !== 'approved') return;
    const text = encodeRequest(
      b.cancel({
        txId,
        amount: 5,
        paymentInfo: receivedPaymentInfo(auth)!,
        reasonCode: ReasonCodes.CancelledByConsumer,
        ...closes,
      }),
    );
    const first = await client.sendRaw('Cancel', text);
    const second = await client.sendRaw('Cancel', text);
    expectKind(first, 'approved');
    expectKind(second, 'approved');
    const rec = sim.ledger().transactions[txId];
    assert.equal(rec?.duplicates.Cancel, 1);
    assert.equal(rec?.accepted.Cancel, 1);
  });

  const faultCases: [FaultKind, string, boolean][] = [
    // kind, expected failure, did the gateway do the work?
    ['http500', 'http-status', false],
    ['reset-before', 'reset', false],
    ['reset-after', 'reset', true],
    ['hang', 'timeout', false],
    ['not-json', 'not-json', true],
    ['bad-schema', 'bad-schema', true],
  ];
  for (const [kind, failure, processed] of faultCases) {
    it(`fault ${kind} -> transport ${failure}`, TEST_TIMEOUT, async () => {
      sim.setFaults([{ kind, rate: 1, times: 1, ops: ['Authorization'] }]);
      const txId = newTx();
      const o = await client.authorization(b.authorization({ txId, amount: 5 }));
      assert.equal(o.kind, 'transport', JSON.stringify(o));
      if (o.kind !== 'transport') return;
      assert.equal(o.failure, failure, o.detail);
      if (kind === 'http500') assert.equal(o.httpStatus, 500);
      assert.equal(
        sim.ledger().transactions[txId] !== undefined,
        processed,
        'ledger shows whether the gateway did the work',
      );
      // The fault fired once: the next call goes through.
      expectKind(await client.authorization(b.authorization({ txId: newTx(), amount: 5 })), 'approved');
      assert.equal(sim.ledger().summary.faults[kind], 1);
      sim.setFaults([]);
    });
  }

  it(
    'an answer lost after the work (reset-after) is recovered by replaying the recorded bytes',
    TEST_TIMEOUT,
    async () => {
      const txId = newTx();
      const auth = await client.authorization(b.authorization({ txId, amount: 5 }));
      if (auth.kind !== 'approved') return assert.fail(JSON.stringify(auth));
      const recorded = encodeRequest(
        b.settlement({
          txId,
          amount: 2,
          paymentInfo: receivedPaymentInfo(auth)!,
          products: [{ item: 1, price: 2 }],
          ...closes,
        }),
      );
      sim.setFaults([{ kind: 'reset-after', rate: 1, times: 1, ops: ['Settlement'] }]);
      const lost = await client.sendRaw('Settlement', recorded);
      assert.equal(lost.kind === 'transport' && lost.failure, 'reset');
      const replay = await client.sendRaw('Settlement', recorded);
      expectKind(replay, 'approved');
      const rec = sim.ledger().transactions[txId]!;
      assert.deepEqual([rec.state, rec.accepted.Settlement, rec.duplicates.Settlement], ['settled', 1, 1]);
      sim.setFaults([]);
    },
  );

  it('a connection refused is classified as refused', TEST_TIMEOUT, async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const dead = createGatewayClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 1_000, connectTimeoutMs: 500 });
    const o = await dead.authorization(b.authorization({ txId: newTx(), amount: 5 }));
    dead.close();
    assert.equal(o.kind, 'transport');
    if (o.kind === 'transport') assert.equal(o.failure, 'refused', o.detail);
  });
});

describe('gateway client: kept-alive connections', () => {
  // A server that announces (Keep-Alive: timeout=2) and keeps idle connections 2 s, counting the
  // connections it accepts. A call after 1.5 s idle must not go out on the old connection: that
  // socket is within a second of being closed by the server, the window in which a request is
  // reset (ECONNRESET) and an Authorization is lost to doubt.
  it(
    'never reuses a connection the server announced it is about to close; a call in progress outlives the idle timeout',
    TEST_TIMEOUT,
    async () => {
      let connections = 0;
      const server = http.createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          // A decline is the smallest valid answer: what matters is that an answer came back.
          const answer = () =>
            res
              .writeHead(200, { 'content-type': 'application/json' })
              .end(JSON.stringify({ Status: { Verdict: 'Declined', Code: 5 } }));
          // The third call is slower than the announced keep-alive: it must still complete.
          if (connections >= 2 && body.includes('"Amount":7')) setTimeout(answer, 2_500);
          else answer();
        });
      });
      server.keepAliveTimeout = 2_000;
      server.on('connection', () => connections++);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as net.AddressInfo;
      const client = createGatewayClient({
        baseUrl: `http://127.0.0.1:${port}`,
        timeoutMs: 5_000,
        connectTimeoutMs: 1_000,
      });
      try {
        await client.authorization(b.authorization({ txId: newTx(), amount: 5 }));
        await client.authorization(b.authorization({ txId: newTx(), amount: 5 }));
        assert.equal(connections, 1, 'back-to-back calls share the kept-alive connection');
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        const late = await client.authorization(b.authorization({ txId: newTx(), amount: 7 }));
        assert.equal(connections, 2, 'after 1.5 s idle against a 2 s keep-alive, a new connection');
        assert.equal(late.kind, 'declined', JSON.stringify(late));
      } finally {
        client.close();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );
});

describe('gateway client against the simulator (HTTPS with gateway.caFile)', () => {
  it('trusts the configured CA and refuses an unknown certificate', TEST_TIMEOUT, async (t) => {
    const tls = makeSelfSignedCert();
    if (tls === null) return t.skip('openssl is not installed');
    const sim = await startGatewaySimulator({ tls: { cert: tls.cert, key: tls.key } });
    const trusting = createGatewayClient({
      baseUrl: sim.url,
      timeoutMs: 2_000,
      connectTimeoutMs: 2_000,
      caFile: tls.certFile,
    });
    const untrusting = createGatewayClient({ baseUrl: sim.url, timeoutMs: 2_000, connectTimeoutMs: 2_000 });
    try {
      assert.ok(sim.url.startsWith('https://'));
      expectKind(await trusting.authorization(b.authorization({ txId: newTx(), amount: 5 })), 'approved');
      const o = await untrusting.authorization(b.authorization({ txId: newTx(), amount: 5 }));
      assert.equal(o.kind, 'transport');
      if (o.kind === 'transport') assert.equal(o.failure, 'refused', o.detail);
    } finally {
      trusting.close();
      untrusting.close();
      await sim.close();
      tls.cleanup();
    }
  });

  it(
    'certificate verification cannot be turned off, not even by NODE_TLS_REJECT_UNAUTHORIZED=0',
    TEST_TIMEOUT,
    async (t) => {
      const tls = makeSelfSignedCert();
      if (tls === null) return t.skip('openssl is not installed');
      const sim = await startGatewaySimulator({ tls: { cert: tls.cert, key: tls.key } });
      const before = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
      const client = createGatewayClient({ baseUrl: sim.url, timeoutMs: 2_000, connectTimeoutMs: 2_000 });
      try {
        const o = await client.authorization(b.authorization({ txId: newTx(), amount: 5 }));
        assert.equal(o.kind === 'transport' && o.failure, 'refused', JSON.stringify(o));
        assert.equal(sim.ledger().summary.transactions, 0, 'nothing reached the gateway');
      } finally {
        if (before === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
        else process.env.NODE_TLS_REJECT_UNAUTHORIZED = before;
        client.close();
        await sim.close();
        tls.cleanup();
      }
    },
  );

  it('an unreadable caFile is a configuration error', () => {
    assert.throws(
      () =>
        createGatewayClient({
          baseUrl: 'https://127.0.0.1:1',
          timeoutMs: 1000,
          connectTimeoutMs: 1000,
          caFile: '/nonexistent/ca.pem',
        }),
      /gateway\.caFile/,
    );
  });
});
