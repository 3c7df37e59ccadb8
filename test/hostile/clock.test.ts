/**
 * Wall-clock steps under the real daemon (docs/decisions/hardening.md items 6 and 7). The daemon's wall clock is
 * stepped through its test clock (QRVEND_TEST_CLOCK_OFFSET_FILE, src/core/clock.ts); the monotonic
 * clock runs on, as it does when NTP or a person steps the system clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRig, type Rig } from '../../rigs/rig.js';
import { startGatewayFront, type GatewayFront } from '../../rigs/hostile/gateway-front.js';
import { until } from '../../src/sim/wait.js';
import { readOutbox } from '../../src/ledger/admin.js';
import { openSession } from '../e2e/support/static-session.js';
import { selectAndPay } from '../e2e/support/dynamic-payment.js';
import { scratchDir } from './support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

interface ClockRig {
  rig: Rig;
  front: GatewayFront;
  /** Steps the daemon's wall clock to `offsetMs` from the real one. */
  setOffset(offsetMs: number): void;
  close(): Promise<void>;
}

async function clockRig(): Promise<ClockRig> {
  const scratch = scratchDir('qrvend-clock-');
  const clockFile = join(scratch.dir, 'offset');
  writeFileSync(clockFile, '0');
  let upstream = 'http://127.0.0.1:9';
  const front = await startGatewayFront({ upstream: () => upstream, hugeBytes: 256 * 1024 });
  let rig: Rig;
  try {
    rig = await createRig({
      // A 20 s payment window: the 30 polls of test 6 take 3 s on a quiet machine and over 5 s (the
      // rig's window) beside a CPU hog on a loaded one; a step of hours still ends it at once if
      // the window were measured on the wall clock.
      config: { gateway: { baseUrl: front.url }, dynamicQr: { paymentTimeoutMs: 20_000 } },
      env: { QRVEND_TEST_CLOCK_OFFSET_FILE: clockFile },
    });
  } catch (err) {
    await front.close();
    scratch.cleanup();
    throw err;
  }
  upstream = rig.gateway.url;
  return {
    rig,
    front,
    setOffset: (offsetMs) => writeFileSync(clockFile, String(offsetMs)),
    async close() {
      try {
        await rig.close();
      } finally {
        await front.close();
        scratch.cleanup();
      }
    },
  };
}

function pendingRow(rig: Rig, txId: string) {
  return readOutbox(join(rig.dir, 'ledger.sqlite'), { limit: 50 }).rows.find((r) => r.txId === txId);
}

/** A session closed without a vend: its Cancel is queued and (the gateway failing) kept pending. */
async function pendingCancel(c: ClockRig): Promise<string> {
  c.front.misbehave.set('Cancel', 'huge-declared');
  const before = c.front.seen.get('Cancel') ?? 0;
  const { txId } = await openSession(c.rig);
  assert.ok(c.rig.vmc.endSession());
  await until(() => (c.front.seen.get('Cancel') ?? 0) > before, 10_000, 'the Cancel to be tried');
  assert.equal(pendingRow(c.rig, txId)?.status, 'pending');
  return txId;
}

const stepLogged = (c: ClockRig, sign: 1 | -1, atLeastMs: number) =>
  c.rig.agent!.waitForLog(
    (l) => l.event === 'clock.step' && sign * Number(l.stepMs) >= atLeastMs && l.code === 'CLOCK_STEP',
    10_000,
    'the clock.step line',
  );

test(
  '6. clock steps: +80 h keeps a queued Cancel pending, -10 h does ' +
    'not delay its retry, +2 h does not end a dynamic QR early',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const c = await clockRig();
    try {
      await c.rig.startAgent();

      // Forward 80 h (beyond the 72 h retry window) while a Cancel is retried.
      const forward = await pendingCancel(c);
      c.setOffset(80 * HOUR);
      await stepLogged(c, 1, 79 * HOUR);
      const seen = c.front.seen.get('Cancel') ?? 0;
      await until(() => (c.front.seen.get('Cancel') ?? 0) >= seen + 2, 10_000, 'two more attempts after the step');
      assert.equal(pendingRow(c.rig, forward)?.status, 'pending', 'not dead-lettered by the step');
      c.front.misbehave.delete('Cancel');
      await until(
        () => c.rig.gateway.ledger().transactions[forward]?.cancel?.verdict === 'Approved',
        15_000,
        'the Cancel to be delivered',
      );

      // Back 10 h while a Cancel waits; then the gateway recovers: the Cancel goes at its next backoff, not 10 h later.
      const backward = await pendingCancel(c);
      c.setOffset(70 * HOUR);
      await stepLogged(c, -1, 9 * HOUR);
      c.front.misbehave.delete('Cancel');
      await until(
        () => c.rig.gateway.ledger().transactions[backward]?.cancel?.verdict === 'Approved',
        15_000,
        'the Cancel to be delivered after the step back',
      );

      // Forward 2 h during a dynamic QR that is paid after 30 polls (about 3 s of a 20 s window).
      const inquiries = c.front.seen.get('Inquiry') ?? 0;
      const payment = await selectAndPay(c.rig, 3, 7.3);
      await until(() => (c.front.seen.get('Inquiry') ?? 0) > inquiries, 10_000, 'the first Inquiry');
      c.setOffset(72 * HOUR);
      await stepLogged(c, 1, HOUR);
      assert.deepEqual(await payment.answer, { kind: 'vend-approve', amount: 7.3 }, 'paid and approved, not cut short');
      assert.ok((c.front.seen.get('Inquiry') ?? 0) - inquiries > 3, 'polling went on after the step');
    } finally {
      await c.close();
    }
  },
);

test(
  '7. replay after retention: with the clock 31 days on and the history pruned, the used TransactionId gets 996',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const c = await clockRig();
    try {
      await c.rig.startAgent();
      const { txId } = await openSession(c.rig);
      assert.ok(c.rig.vmc.endSession());
      await until(
        () => c.rig.gateway.ledger().transactions[txId]?.cancel?.verdict === 'Approved',
        15_000,
        'the session to be closed at the gateway',
      );
      await until(() => pendingRow(c.rig, txId)?.status === 'done', 10_000, 'the Cancel recorded as delivered');

      c.setOffset(31 * DAY);
      await c.rig.stopAgent('SIGTERM');
      await c.rig.startAgent(); // the drainer prunes at start
      await c.rig.agent!.waitForLog(
        (l) => l.msg.startsWith('outbox retention: pruned') && Number(l.transactions) >= 1,
        15_000,
        'retention to prune the transaction',
      );
      assert.equal(pendingRow(c.rig, txId), undefined, 'the history is gone');

      const replay = await c.rig.start({ transactionId: txId });
      assert.equal(replay.outcome.kind, 'declined', JSON.stringify(replay.outcome));
      assert.equal(replay.outcome.kind === 'declined' ? replay.outcome.code : null, 996);
    } finally {
      await c.close();
    }
  },
);
