/**
 * A Start relayed over the fleet link (src/start/relayed.ts) on a machine's real payment side
 * (real SQLite ledger, real flow, the HTTP endpoint beside it): judged by the same checks as a
 * direct Start, answered with the same bytes, and refused without a trace in the ledger when the
 * relay's deadline has passed (on arrival, or right before the Start would be recorded).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/core/log.js';
import { post } from './helpers.js';
import { createTestMachine, type TestMachineOptions } from '../relay/support/machine.js';
import { createTrustKit } from '../../rigs/relay/trust-kit.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const TOKEN = randomBytes(32).toString('hex');
let seq = 0;
const txId = () => `relayed-${process.pid}-${++seq}`;

function startBody(tx: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    AppUserId: 'user-1',
    SecretToken: TOKEN,
    TerminalId: 'TERM-R1',
    TransactionId: tx,
    ConsumerData: { k: 'v' },
    ...overrides,
  });
}

function args(body: string, overrides: Record<string, unknown> = {}) {
  return { integratorName: 'acme-wallet', body, deadlineAt: Date.now() + 5_000, client: '203.0.113.7', ...overrides };
}

type Kit = ReturnType<typeof createTrustKit>;

async function withMachine(
  options: Partial<TestMachineOptions>,
  fn: (m: Awaited<ReturnType<typeof createTestMachine>>, logs: string[], kit: Kit) => Promise<void>,
): Promise<void> {
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _e, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const kit = createTrustKit({ machines: [], token: TOKEN });
  const machine = await createTestMachine({
    terminalId: 'TERM-R1',
    uniQr: 'UNIQR-R1',
    token: TOKEN,
    log: createLogger({ level: 'trace', destination }),
    keyring: kit.machineKeyring,
    signer: kit.signer,
    ...options,
  });
  try {
    await fn(machine, logs, kit);
  } finally {
    await machine.close();
    kit.remove();
  }
}

test(
  'a relayed Start is accepted, recorded and authorized; the same TransactionId directly, or relayed again, is 996',
  T,
  async () => {
    await withMachine({}, async (m, logs) => {
      const tx = txId();
      const outcome = await m.relay(args(startBody(tx)));
      assert.ok(outcome.ok, JSON.stringify(outcome));
      assert.equal(outcome.result.httpStatus, 200);
      assert.match(outcome.result.contentType, /^application\/json/);
      const body = JSON.parse(outcome.result.body);
      assert.equal(body.Status.Verdict, 'Approved');
      assert.equal(body.TransactionId, tx);
      assert.deepEqual(body.ConsumerData, { k: 'v' });
      assert.ok(m.ledger.transactionIdUsed(tx));
      // Held until the relay confirms the wallet got the answer (no Authorization before).
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(m.authorizations, []);
      assert.deepEqual(m.relayed.held, [tx]);
      assert.ok(m.confirm(tx).ok);
      for (let i = 0; i < 100 && !m.sent.some((s) => s.type === 'session.begin'); i++)
        await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(m.authorizations, [tx]);

      const direct = await post(m.endpoint!, JSON.parse(startBody(tx)));
      assert.equal(direct.json.Status.Code, 996);
      const again = await m.relay(args(startBody(tx)));
      assert.ok(again.ok);
      assert.equal(JSON.parse(again.result.body).Status.Code, 996);
      assert.equal(again.result.body, direct.text, 'the relayed answer is byte for byte the endpoint answer');
      assert.equal(m.core.stats.snapshot(0, { openConnections: 0, trackedSources: 0 }).relayed, 2);
      assert.ok(!logs.join('').includes(TOKEN), 'the SecretToken never reaches the log');
    });
  },
);

test(
  'a relayed body that still carries a SecretToken gets 9 (the relay ' +
    'never forwards one); a Start for another machine 50; busy 30',
  T,
  async () => {
    await withMachine({}, async (m, _logs, kit) => {
      // Vouched for, but with a token in the body: a relay that forwards tokens is not one of ours.
      const withToken = JSON.stringify({
        AppUserId: 'user-1',
        SecretToken: TOKEN,
        TerminalId: 'TERM-R1',
        TransactionId: txId(),
      });
      const refused = await m.relayed.start(
        kit.signer.start(
          'TERM-R1',
          { integratorName: 'acme-wallet', body: withToken, client: '203.0.113.7' },
          5_000,
          Date.now(),
        ),
      );
      assert.ok(refused.ok);
      assert.equal(JSON.parse(refused.result.body).Status.Code, 9);

      const other = await m.relay(args(startBody(txId(), { TerminalId: 'TERM-OTHER' })));
      assert.ok(other.ok);

      assert.equal(JSON.parse(other.result.body).Status.Code, 50);

      const first = await m.relay(args(startBody(txId())));
      assert.ok(first.ok && JSON.parse(first.result.body).Status.Verdict === 'Approved');
      const busy = await m.relay(args(startBody(txId())));
      assert.ok(busy.ok);
      assert.equal(JSON.parse(busy.result.body).Status.Code, 30);
    });
  },
);

test(
  'a relayed Start that arrives after the deadline is refused: nothing recorded, nothing started, counted',
  T,
  async () => {
    // The machine's clock reads 10 s after the relay's: the 5 s deadline has passed on arrival.
    await withMachine({ wallNow: () => Date.now() + 10_000 }, async (m) => {
      const tx = txId();
      const outcome = await m.relay(args(startBody(tx)));
      assert.deepEqual(outcome.ok ? null : outcome.error.code, 'TOO_LATE');
      assert.equal(m.ledger.transactionIdUsed(tx), false);
      assert.equal(m.authorizations.length, 0);
      assert.equal(m.sent.filter((s) => s.type === 'session.begin').length, 0);
      assert.equal(m.core.stats.snapshot(0, { openConnections: 0, trackedSources: 0 }).relayedTooLate, 1);
    });
  },
);

test(
  'a deadline that passes while the Start is being judged stops it right before it is recorded; the wallet may retry',
  T,
  async () => {
    let step = 0;
    let jumpMs = 6_000;
    // Arrival reads 1000; every later reading is jumpMs on: with 6 s the 5 s deadline has passed by the accept.
    await withMachine({ monotonicNow: () => (step++ === 0 ? 1_000 : 1_000 + jumpMs) }, async (m) => {
      const tx = txId();
      const outcome = await m.relay(args(startBody(tx)));
      assert.equal(outcome.ok ? null : outcome.error.code, 'TOO_LATE');
      assert.equal(m.ledger.transactionIdUsed(tx), false, 'nothing recorded');
      assert.equal(m.authorizations.length, 0, 'no Authorization');
      const stats = m.core.stats.snapshot(0, { openConnections: 0, trackedSources: 0 });
      assert.equal(stats.relayedTooLate, 1);
      assert.equal(stats.accepted, 0);

      // In time now: the same TransactionId is accepted (the refusal burned nothing).
      step = 0;
      jumpMs = 10;
      const retry = await m.relay(args(startBody(tx), { deadlineAt: Date.now() + 5_000 }));
      assert.ok(retry.ok);
      assert.equal(JSON.parse(retry.result.body).Status.Verdict, 'Approved');
    });
  },
);

test("the rate limit is keyed by the wallet's address the relay reported, shared with the endpoint", T, async () => {
  await withMachine({ rateLimit: { perSecond: 1, burst: 1 } }, async (m) => {
    const wrong = () => startBody(txId(), { TerminalId: 'TERM-OTHER' });
    const a1 = await m.relay(args(wrong(), { client: '198.51.100.1' }));
    const a2 = await m.relay(args(wrong(), { client: '198.51.100.1' }));
    const b1 = await m.relay(args(wrong(), { client: '198.51.100.2' }));
    assert.ok(a1.ok && a2.ok && b1.ok);
    assert.equal(a1.result.httpStatus, 200);
    assert.equal(a2.result.httpStatus, 429);
    assert.ok(
      a2.result.retryAfterS !== undefined && a2.result.retryAfterS >= 1,
      `a 429 carries its Retry-After for the relay: ${JSON.stringify(a2.result)}`,
    );
    assert.equal(a1.result.retryAfterS, undefined, 'only a 429 carries a Retry-After');
    assert.equal(JSON.parse(a2.result.body).Status.Code, 3);
    assert.equal(b1.result.httpStatus, 200);
  });
});

test('bad args and a deadline implausibly far ahead are refused without judging the Start', T, async () => {
  await withMachine({ listen: false }, async (m) => {
    assert.equal(m.endpoint, null, 'start.listen null: no inbound port');
    const bad = await m.relayed.start({ integratorName: 'acme-wallet', body: 3 });
    assert.equal(bad.ok ? null : bad.error.code, 'BAD_ARGS');
    const tx = txId();
    const ahead = await m.relay(args(startBody(tx), { deadlineAt: Date.now() + 600_000 }));
    assert.equal(ahead.ok ? null : ahead.error.code, 'TOO_LATE');
    assert.equal(m.ledger.transactionIdUsed(tx), false);
    // Still served through the relayed path alone.
    const ok = await m.relay(args(startBody(txId())));
    assert.ok(ok.ok && JSON.parse(ok.result.body).Status.Verdict === 'Approved');
  });
});

test(
  'a relayed Start without a good voucher is refused and starts ' +
    'nothing: unsigned, an untrusted key, another machine, a replay',
  T,
  async () => {
    const stranger = createTrustKit({ machines: [] });
    try {
      await withMachine({}, async (m, logs, kit) => {
        const body = () => JSON.stringify({ AppUserId: 'user-1', TerminalId: 'TERM-R1', TransactionId: txId() });
        const unsigned = { integratorName: 'acme-wallet', body: body(), deadlineAt: Date.now() + 5_000, client: 'x' };
        const byStranger = stranger.signer.start(
          'TERM-R1',
          { integratorName: 'acme-wallet', body: body(), client: 'x' },
          5_000,
          Date.now(),
        );
        const forOther = kit.signer.start(
          'TERM-OTHER',
          { integratorName: 'acme-wallet', body: body(), client: 'x' },
          5_000,
          Date.now(),
        );
        const good = kit.signer.start(
          'TERM-R1',
          { integratorName: 'acme-wallet', body: body(), client: 'x' },
          5_000,
          Date.now(),
        );
        const altered = { ...good, body: body() };
        for (const [what, a] of [
          ['unsigned', unsigned],
          ['an untrusted key', byStranger],
          ['another machine', forOther],
          ['an altered body', altered],
        ] as const) {
          const outcome = await m.relayed.start(a);
          assert.equal(outcome.ok ? 'ok' : outcome.error.code, 'BAD_ARGS', what);
          assert.match(
            outcome.ok ? '' : outcome.error.message,
            /not vouched for by a relay key this machine trusts/,
            what,
          );
        }
        const first = await m.relayed.start(good);
        assert.ok(first.ok && JSON.parse(first.result.body).Status.Verdict === 'Approved');
        m.relayed.dropAll('next');
        const replay = await m.relayed.start(good);
        assert.equal(replay.ok ? 'ok' : replay.error.code, 'BAD_ARGS', 'the same voucher twice');
        assert.equal(m.core.stats.snapshot(0, { openConnections: 0, trackedSources: 0 }).relayedUnvouched, 5);
        assert.equal(m.authorizations.length, 0);
        assert.ok(logs.join('').includes('relayed Start refused: not vouched for'));
      });
      // No relay key trusted at all (fleet.trustFile unset): nothing relayed is taken.
      await withMachine({ keyring: null }, async (m) => {
        const outcome = await m.relay(args(startBody(txId())));
        assert.equal(outcome.ok ? 'ok' : outcome.error.code, 'BAD_ARGS');
      });
    } finally {
      stranger.remove();
    }
  },
);

test(
  'an Approved relayed Start never confirmed is dropped: no ' +
    'Authorization, closed as declined with nothing owed, the slot freed',
  T,
  async () => {
    await withMachine({ confirmGraceMs: 100 }, async (m) => {
      const tx = txId();
      const outcome = await m.relay(args(startBody(tx), { deadlineAt: Date.now() + 600 }));
      assert.ok(outcome.ok && JSON.parse(outcome.result.body).Status.Verdict === 'Approved');
      for (let i = 0; i < 300 && m.relayed.held.length > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(m.relayed.held, []);
      assert.equal(m.ledger.getTransaction(tx)?.state, 'declined');
      assert.equal(m.authorizations.length, 0, 'nothing reached the gateway');
      assert.equal(m.sent.filter((s) => s.type === 'session.begin').length, 0);
      assert.equal(m.ledger.outbox.list({ limit: 10 }).length, 0, 'nothing owed: no Cancel queued');
      assert.equal(m.core.stats.snapshot(0, { openConnections: 0, trackedSources: 0 }).relayedDropped, 1);
      // Too late now: the confirmation authorizes nothing.
      assert.equal(m.confirm(tx).ok, false);
      assert.equal(m.authorizations.length, 0);
      // The session slot is free again.
      const next = await m.relay(args(startBody(txId())));
      assert.ok(next.ok && JSON.parse(next.result.body).Status.Verdict === 'Approved');
    });
  },
);

test("a confirmation must name the held Start's voucher and be signed by the relay", T, async () => {
  const stranger = createTrustKit({ machines: [] });
  try {
    await withMachine({}, async (m, _logs, kit) => {
      const tx = txId();
      assert.ok((await m.relay(args(startBody(tx)))).ok);
      assert.equal(
        m.relayed.confirm(kit.signer.confirm('TERM-R1', tx, 'another-start-nonce-000', Date.now())).ok,
        false,
      );
      assert.equal(m.relayed.confirm(stranger.signer.confirm('TERM-R1', tx, 'x'.repeat(22), Date.now())).ok, false);
      await new Promise((r) => setTimeout(r, 30));
      assert.equal(m.authorizations.length, 0);
      assert.ok(m.confirm(tx).ok);
      for (let i = 0; i < 100 && m.authorizations.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(m.authorizations, [tx]);
    });
  } finally {
    stranger.remove();
  }
});
