/**
 * A hostile gateway behind the real daemon (docs/decisions/hardening.md items 4 and 5), on loopback.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRig, type LogLine, type Rig } from '../../rigs/rig.js';
import { startGatewayFront, type GatewayFront } from '../../rigs/hostile/gateway-front.js';
import { until } from '../../src/sim/wait.js';
import { postStart, startBody } from './support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

async function frontedRig(): Promise<{ rig: Rig; front: GatewayFront; close(): Promise<void> }> {
  let upstream = 'http://127.0.0.1:9';
  const front = await startGatewayFront({ upstream: () => upstream });
  let rig: Rig;
  try {
    rig = await createRig({ config: { gateway: { baseUrl: front.url } } });
  } catch (err) {
    await front.close();
    throw err;
  }
  upstream = rig.gateway.url;
  return {
    rig,
    front,
    async close() {
      try {
        await rig.close();
      } finally {
        await front.close();
      }
    },
  };
}

const tooLarge = (l: LogLine) => l.msg.startsWith('gateway answer too large');

test(
  '4. answers of 64 MB, with a declared length or ending at close, are aborted: ' +
    'the daemon lives, retries, and survives a restart into the same gateway',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const { rig, front, close } = await frontedRig();
    try {
      await rig.startAgent();
      front.misbehave.set('Authorization', 'huge-undeclared');
      front.misbehave.set('Cancel', 'huge-declared');
      const start = await rig.start();
      assert.equal(start.outcome.kind, 'approved', 'the Start itself is accepted; the Authorization behind it fails');
      const logged = await rig.agent!.waitForLog(tooLarge, 20_000, 'the too-large log line');
      assert.match(String(logged.size), /bytes/);
      assert.equal(logged.limitBytes, 64 * 1024);
      // The outbox's Cancel meets a declared 64 MB answer: refused, and retried like any failure.
      await until(() => (front.seen.get('Cancel') ?? 0) >= 2, 20_000, 'the Cancel to be retried');
      assert.equal(rig.agent!.child.exitCode, null, 'the daemon is alive');
      assert.ok(
        (await postStart(rig, JSON.stringify(startBody(rig, { TerminalId: 'NOT-THIS-MACHINE' }))))?.json.Status,
        'the Start endpoint still answers',
      );
      const attempts = (front.seen.get('Authorization') ?? 0) + (front.seen.get('Cancel') ?? 0);
      assert.ok(
        front.hugeBytesWritten < attempts * 16 * 1024 * 1024,
        `the daemon stopped reading early (${front.hugeBytesWritten} bytes written over ${attempts} answers)`,
      );

      // After a crash, recovery and the outbox call the same gateway again: still no harm.
      await rig.stopAgent('SIGKILL');
      await rig.startAgent();
      const cancelsBefore = front.seen.get('Cancel') ?? 0;
      await rig.agent!.waitForLog(tooLarge, 20_000, 'the too-large line after the restart');
      await until(() => (front.seen.get('Cancel') ?? 0) > cancelsBefore, 20_000, 'a Cancel after the restart');
      assert.equal(rig.agent!.child.exitCode, null, 'the daemon is alive after the restart');

      // The gateway mends its ways: the Cancel is delivered.
      front.misbehave.clear();
      await until(
        () => rig.gateway.ledger().transactions[start.transactionId]?.cancel?.verdict === 'Approved',
        20_000,
        'the Cancel to be delivered',
      );
    } finally {
      await close();
    }
  },
);

test(
  '5. an approval in another currency than asked is read as a decline (code 8) ' +
    'with a log line; no session opens; the held money is released by a Cancel',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const { rig, front, close } = await frontedRig();
    try {
      await rig.startAgent();
      front.misbehave.set('Authorization', 'other-currency');
      const sessions = rig.vmc.records().length;
      const start = await rig.start();
      assert.equal(start.outcome.kind, 'approved');
      const line = await rig.agent!.waitForLog(
        (l) => l.msg.startsWith('gateway approved in another currency'),
        20_000,
        'the currency log line',
      );
      assert.deepEqual(line.answered, { code: 'USD', numeric: '840' });
      assert.equal((line.asked as { code: string }).code, 'EUR');
      await rig.agent!.waitForLog(
        (l) => l.txId === start.transactionId && /declin/i.test(l.msg),
        20_000,
        'the flow to treat it as declined',
      );
      assert.equal(rig.vmc.records().length, sessions, 'no MDB session was opened on a foreign-currency approval');
      // The gateway did approve (and holds the money): qrvend releases it with a Cancel, reason 3.
      const deadline = Date.now() + 20_000;
      while (rig.gateway.ledger().transactions[start.transactionId]?.state !== 'cancelled') {
        assert.ok(
          Date.now() < deadline,
          `the held authorization was released (gateway state: ` +
            `${rig.gateway.ledger().transactions[start.transactionId]?.state})`,
        );
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(rig.gateway.ledger().summary.openAuthorizations, [], 'no authorization left held');
    } finally {
      await close();
    }
  },
);
