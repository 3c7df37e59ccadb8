/**
 * The relay serving HTTPS with its own certificate (relay.certFile/keyFile): the wallet simulator,
 * trusting that certificate, gets the machine's answer unchanged. The machine here is canned: it
 * answers every Start Approved, echoing the TransactionId (the relay is under test, not the machine).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startSimMachines } from '../../rigs/relay/machines.js';
import { sendStart } from '../../src/sim/wallet/index.js';
import { makeSelfSignedCert } from '../gateway/tls-fixture.js';
import { createRelayRig, until } from './support/relay-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

test(
  'HTTPS with its own certificate: a Start through the relay gets the machine answer',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const tls = makeSelfSignedCert();
    if (tls === null) {
      t.skip('openssl is not installed');
      return;
    }
    const rig = await createRelayRig({ machines: [{ machineId: 'TERM-TLS', terminalId: 'TERM-TLS', uniQr: null }] });
    const sims = await startSimMachines({
      url: rig.broker.url,
      protocolVersion: rig.protocolVersion,
      signer: rig.kit.machineSigner,
      machines: [{ machineId: 'TERM-TLS', terminalId: 'TERM-TLS', uniQr: null }],
      answer: async (_m, args) => {
        const tx = JSON.parse((args as { body: string }).body).TransactionId as string;
        return {
          ok: true,
          result: {
            httpStatus: 200,
            contentType: 'application/json; charset=utf-8',
            body: JSON.stringify({ Status: { Verdict: 'Approved' }, TransactionId: tx }),
          },
        };
      },
    });
    try {
      const relay = await rig.startRelay({ certFile: tls.certFile, keyFile: tls.keyFile });
      assert.match(relay.origin, /^https:\/\/127\.0\.0\.1:\d+$/);
      await until(() => relay.link.stats().online === 1, 10_000, 'the machine online');
      const result = await sendStart({
        url: relay.origin,
        integratorName: 'acme-wallet',
        secretToken: rig.kit.token,
        terminalId: 'TERM-TLS',
        caFile: tls.certFile,
        timeoutMs: 10_000,
      });
      assert.equal(result.outcome.kind, 'approved', JSON.stringify(result.outcome));
      assert.equal(result.outcome.kind === 'approved' && result.outcome.response.TransactionId, result.transactionId);
    } finally {
      await sims.close();
      await rig.close();
      tls.cleanup();
    }
  },
);
