/**
 * docs/decisions/fleet-trust.md item 8: the SecretToken never crosses the broker. Before: every `cmd/start` body
 * carried
 * it, readable by any client allowed to read the fleet's topics. Now the relay checks it (constant
 * time, relay.integrators) and forwards the Start without it, vouched for by its own key; the
 * machine runs the real Start decisions and takes the Start only with that voucher. A client that
 * reads everything on the broker (here: `#`) sees the Starts, never the token; a wrong token is
 * answered 9 by the relay and nothing is published.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import mqtt from 'mqtt';
import { startSimMachines } from '../../rigs/relay/machines.js';
import { createTestMachine } from './support/machine.js';
import { createRelayRig, postStart, until } from './support/relay-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

test(
  "the SecretToken never crosses the broker; the machine takes the Start on the relay's voucher",
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const rig = await createRelayRig({ machines: [{ machineId: 'TERM-S', terminalId: 'TERM-S', uniQr: 'QR-S' }] });
    const token = rig.kit.token;
    const machine = await createTestMachine({
      terminalId: 'TERM-S',
      uniQr: 'QR-S',
      token,
      listen: false,
      keyring: rig.kit.machineKeyring,
    });
    const spy = await mqtt.connectAsync(rig.broker.url, {
      protocolVersion: rig.protocolVersion,
      clientId: 'secret-spy',
      reconnectPeriod: 0,
    });
    const seen: string[] = [];
    spy.on('message', (topic, payload) => seen.push(`${topic} ${payload.toString('utf8')}`));
    await spy.subscribeAsync('#', { qos: 1 });
    const sims = await startSimMachines({
      url: rig.broker.url,
      protocolVersion: rig.protocolVersion,
      signer: rig.kit.machineSigner,
      machines: [{ machineId: 'TERM-S', terminalId: 'TERM-S', uniQr: 'QR-S' }],
      answer: (_m, args) => machine.relayed.start(args),
      confirm: (_m, args) => machine.relayed.confirm(args),
    });
    try {
      const relay = await rig.startRelay();
      await until(() => relay.link.stats().online === 1, 10_000, 'the machine online');
      const tx = `secret-${process.pid}-1`;
      const approved = await postStart(
        relay.origin,
        JSON.stringify({ AppUserId: 'wallet-user', SecretToken: token, TerminalId: 'TERM-S', TransactionId: tx }),
      );
      assert.equal(approved.json.Status.Verdict, 'Approved');
      await until(() => machine.authorizations.includes(tx), 10_000, 'the Authorization after the confirmation');

      const published = () => sims.received.get('TERM-S') ?? 0;
      const before = published();
      const wrong = await postStart(
        relay.origin,
        JSON.stringify({
          AppUserId: 'wallet-user',
          SecretToken: 'w'.repeat(64),
          TerminalId: 'TERM-S',
          TransactionId: `secret-${process.pid}-2`,
        }),
      );
      assert.equal(wrong.json.Status.Code, 9);
      assert.equal(wrong.json.Status.StatusMessage, 'not allowed: integrator not authenticated');
      const otherIntegrator = await postStart(
        relay.origin,
        JSON.stringify({
          AppUserId: 'wallet-user',
          SecretToken: token,
          TerminalId: 'TERM-S',
          TransactionId: `secret-${process.pid}-3`,
        }),
        { integratorName: 'other-wallet' },
      );
      assert.equal(otherIntegrator.json.Status.Code, 9);
      assert.equal(published(), before, 'a Start the relay did not authenticate is not published');

      // What crossed the broker: the Start (its members, a voucher), never the token.
      await until(() => seen.some((m) => m.includes('/cmd/start.confirm')), 10_000, 'the confirmation on the broker');
      const starts = seen.filter((m) => m.includes('/cmd/start '));
      assert.equal(starts.length, 1);
      assert.match(starts[0]!, /wallet-user/);
      assert.match(starts[0]!, /"voucher":\{"keyId":"relay-1"/);
      assert.ok(!seen.some((m) => m.includes(token)), 'the SecretToken was on the broker');
      assert.ok(!seen.some((m) => m.includes('SecretToken')), 'no SecretToken member on the broker');
      assert.ok(!rig.logs.join('').includes(token));
    } finally {
      await spy.endAsync(true).catch(() => {});
      await sims.close();
      await rig.close();
      await machine.close();
    }
  },
);

test('a token file the relay cannot use stops it, naming its relay key', { timeout: TEST_DEADLINE_MS }, async () => {
  const rig = await createRelayRig({ machines: [] });
  try {
    await assert.rejects(
      rig.startRelay({ integrators: [{ name: 'acme-wallet', secretTokenFile: `${rig.kit.dir}/missing.token` }] }),
      (err: Error & { code?: string; hint?: string }) =>
        err.code === 'SECRET_UNREADABLE' &&
        /relay\.integrators\[0\]\.secretTokenFile/.test(err.hint ?? '') &&
        !err.message.includes(rig.kit.token),
    );
  } finally {
    await rig.close();
  }
});
