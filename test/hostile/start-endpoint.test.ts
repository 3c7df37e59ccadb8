/**
 * Hostile wallets at the Start endpoint of the real daemon (docs/decisions/hardening.md items 1-3), over loopback.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRig, type Rig } from '../../rigs/rig.js';
import { startSlowloris } from '../../rigs/hostile/slowloris.js';
import { formatListing } from '../../src/ledger/outbox-report.js';
import { formatReport } from '../../src/doctor/format.js';
import { postStart, sleep, startBody } from './support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

let rig: Rig;
before(async () => {
  rig = await createRig();
  await rig.startAgent();
});
after(async () => rig?.close());

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

test(
  "1. slowloris: 64 slow-header connections from one address leave >= 99 % of another client's Starts answered",
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const origin = new URL(rig.agent!.startOrigin!);
    const attack = startSlowloris({
      host: origin.hostname,
      port: Number(origin.port),
      localAddress: '127.0.0.2',
      count: 64,
      byteEveryMs: 200,
    });
    try {
      await sleep(1_000); // the attack holds whatever it can get before the client starts
      const replies: Array<Promise<unknown>> = [];
      // 40 Starts, one every 250 ms, from another address; each for another machine (Declined 50:
      // an answer, and nothing starts). Counted answered when any JSON answer arrives.
      for (let i = 0; i < 40; i += 1) {
        replies.push(
          postStart(rig, JSON.stringify(startBody(rig, { TerminalId: 'NOT-THIS-MACHINE' })), {
            localAddress: '127.0.0.3',
            deadlineMs: 15_000,
          }),
        );
        await sleep(250);
      }
      const answered = (await Promise.all(replies)).filter((r) => r !== null).length;
      assert.ok(attack.opened >= 64, 'the attack ran');
      assert.ok(
        answered / replies.length >= 0.99,
        `${answered} of ${replies.length} Starts answered during the attack`,
      );
    } finally {
      await attack.stop();
    }
  },
);

test(
  '2. TransactionId with CR/LF, an escape sequence or a bidi control is refused (998); the CLI escapes untrusted text',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    for (const txId of [
      'hostile-\r\nforged: line',
      'hostile-\u001b[2J-clear',
      'hostile-\u202e-reversed',
      'hostile-\u0000-nul-byte',
      'hostile-caf\u00e9-nonascii',
    ]) {
      const reply = await postStart(rig, JSON.stringify(startBody(rig, { TransactionId: txId })));
      assert.ok(reply, 'answered');
      assert.equal(reply.json.Status?.Verdict, 'Declined', JSON.stringify(txId));
      assert.equal(reply.json.Status?.Code, 998, JSON.stringify(txId));
      assert.equal(rig.gateway.ledger().transactions[txId], undefined, 'never reached the gateway');
    }
    // What the technician's terminal shows: an outbox row and a doctor line holding hostile text.
    const hostile = 'tx-\u001b]0;owned\u0007-\r\n\u202e';
    const listing = formatListing(
      {
        counts: { pending: 1, dead: 0, oldestPendingAtMs: 0 },
        rows: [
          {
            id: 1,
            txId: hostile,
            op: 'Cancel',
            status: 'pending',
            attempts: 1,
            enqueuedAtMs: 0,
            windowStartedAtMs: 0,
            nextAttemptAtMs: 0,
            doneAtMs: null,
            deadAtMs: null,
            lastError: `declined 6: ${hostile}`,
            lastCode: 6,
            body: `{"x":"${hostile}"}`,
          },
        ],
      } as unknown as Parameters<typeof formatListing>[0],
      { json: false, bodies: true, path: '/var/lib/qrvend/ledger.sqlite' },
    );
    assert.doesNotMatch(listing.replace(/\n/g, ''), CONTROL, 'outbox text output carries no raw control character');
    assert.match(listing, /\\x1b\]0;owned\\x07-\\x0d\\x0a\\u202e/);
    const report = formatReport(
      {
        results: [{ id: 'gateway', title: 'gateway', status: 'WARN', summary: `answered ${hostile}`, action: hostile }],
        counts: { OK: 0, WARN: 1, FAIL: 0 },
        ok: true,
      } as unknown as Parameters<typeof formatReport>[0],
      undefined,
    );
    assert.doesNotMatch(report.replace(/\n/g, ''), CONTROL, 'doctor text output carries no raw control character');
  },
);

test(
  '3. a body with a duplicated member (SecretToken twice) is refused as malformed (998), whichever copy is right',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const wrong = 'f'.repeat(64);
    for (const [first, second] of [
      [wrong, rig.secretToken],
      [rig.secretToken, wrong],
    ]) {
      const base = startBody(rig);
      const { SecretToken: _drop, ...rest } = base;
      const text =
        `{"SecretToken":${JSON.stringify(first)},${JSON.stringify(rest).slice(1, -1)}` +
        `,"SecretToken":${JSON.stringify(second)}}`;
      const reply = await postStart(rig, text);
      assert.ok(reply, 'answered');
      assert.equal(reply.json.Status?.Code, 998);
      assert.match(String(reply.json.Status?.StatusMessage), /appears more than once/);
      assert.equal(rig.gateway.ledger().transactions[String(base.TransactionId)], undefined);
    }
    // Nested objects are checked too; the same name in two different objects is fine.
    const nested = startBody(rig, { ConsumerData: { a: { k: 1 }, b: { k: 2 } } });
    const text = JSON.stringify(nested).replace('"b":{"k":2}', '"b":{"k":2,"k":3}');
    assert.equal((await postStart(rig, text))?.json.Status?.Code, 998);
  },
);
