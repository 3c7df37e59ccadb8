/**
 * docs/decisions/fleet-trust.md item 9: a machine's answer reaches the wallet only when it conforms to the seed.
 * Before:
 * a machine answering 302 text/html <script> had it passed to the wallet as it was, and status 100
 * reset the wallet's connection. Now anything but 200 JSON with a Start response (Approved only
 * for the TransactionId asked) or a documented refusal (404, 405, 413, 415, 429 with a Declined
 * Start response) is answered Declined 30 by the relay, and no confirmation goes to the machine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimMachines } from '../../rigs/relay/machines.js';
import type { RelayedStartOutcome } from '../../src/start/index.js';
import { createRelayRig, postStart, until } from './support/relay-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

type Answer = { httpStatus: number; contentType: string; body: string };
const json = 'application/json; charset=utf-8';

test(
  "a hostile machine's answers become Declined 30; conforming ones pass",
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const rig = await createRelayRig({ machines: [{ machineId: 'EVIL', terminalId: 'TERM-EVIL', uniQr: null }] });
    let next: (tx: string) => Answer = () => ({ httpStatus: 200, contentType: json, body: '{}' });
    const sims = await startSimMachines({
      url: rig.broker.url,
      protocolVersion: rig.protocolVersion,
      signer: rig.kit.machineSigner,
      machines: [{ machineId: 'EVIL', terminalId: 'TERM-EVIL', uniQr: null }],
      answer: async (_m, args): Promise<RelayedStartOutcome> => ({
        ok: true,
        result: next(JSON.parse((args as { body: string }).body).TransactionId as string),
      }),
    });
    try {
      const relay = await rig.startRelay();
      await until(() => relay.link.stats().online === 1, 10_000, 'the machine online');
      let seq = 0;
      const ask = (answer: (tx: string) => Answer) => {
        next = answer;
        return postStart(
          relay.origin,
          JSON.stringify({
            AppUserId: 'u',
            SecretToken: rig.kit.token,
            TerminalId: 'TERM-EVIL',
            TransactionId: `hostile-${process.pid}-${++seq}`,
          }),
        );
      };
      const hostile: Array<[string, (tx: string) => Answer]> = [
        [
          '302 text/html <script>',
          () => ({ httpStatus: 302, contentType: 'text/html', body: '<script>alert(document.cookie)</script>' }),
        ],
        ['status 100', () => ({ httpStatus: 100, contentType: json, body: '' })],
        [
          '200 text/html',
          (tx) => ({
            httpStatus: 200,
            contentType: 'text/html',
            body: JSON.stringify({ Status: { Verdict: 'Approved' }, TransactionId: tx }),
          }),
        ],
        [
          '200 JSON that is no Start response',
          () => ({ httpStatus: 200, contentType: json, body: '{"hello":"world"}' }),
        ],
        ['200 not JSON', () => ({ httpStatus: 200, contentType: json, body: '<script>' })],
        [
          'an approval of another TransactionId',
          () => ({
            httpStatus: 200,
            contentType: json,
            body: JSON.stringify({ Status: { Verdict: 'Approved' }, TransactionId: 'someone-else-0001' }),
          }),
        ],
        [
          '500',
          () => ({
            httpStatus: 500,
            contentType: json,
            body: JSON.stringify({ Status: { Verdict: 'Declined', Code: 999 } }),
          }),
        ],
        [
          '429 approving',
          (tx) => ({
            httpStatus: 429,
            contentType: json,
            body: JSON.stringify({ Status: { Verdict: 'Approved' }, TransactionId: tx }),
          }),
        ],
      ];
      for (const [what, answer] of hostile) {
        const reply = await ask(answer);
        assert.equal(reply.status, 200, what);
        assert.match(reply.contentType ?? '', /^application\/json/, what);
        assert.equal(reply.json.Status.Verdict, 'Declined', what);
        assert.equal(reply.json.Status.Code, 30, what);
        assert.ok(!reply.text.includes('<script>'), what);
      }
      assert.equal(relay.stats().server.byOutcome['nonconforming'], hostile.length);
      assert.equal(relay.stats().server.confirmed, 0, 'nothing was confirmed to the machine');

      const approved = await ask((tx) => ({
        httpStatus: 200,
        contentType: json,
        body: JSON.stringify({ Status: { Verdict: 'Approved' }, TransactionId: tx }),
      }));
      assert.equal(approved.json.Status.Verdict, 'Approved');
      const limited = await ask(() => ({
        httpStatus: 429,
        contentType: json,
        body: JSON.stringify({
          Status: { Verdict: 'Declined', Code: 3, CustomDeclineCode: 3, StatusMessage: 'count limit exceeded' },
        }),
      }));
      assert.equal(limited.status, 429);
      assert.equal(limited.json.Status.Code, 3);
      await until(() => sims.confirmed.get('EVIL') === 1, 10_000, 'the one confirmation (of the approval)');
    } finally {
      await sims.close();
      await rig.close();
    }
  },
);
