/**
 * A machine's 429 through the relay keeps its Retry-After: the wallet is told when to try again,
 * exactly as the machine's own endpoint would tell it. The machine runs the real Start decisions
 * with a rate limit of one Start a second; the relay reports the wallet's address, so its
 * second Start in a row is over the limit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startSimMachines } from '../../rigs/relay/machines.js';
import { createTestMachine } from './support/machine.js';
import { createRelayRig, postStart, until } from './support/relay-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

test("a machine's 429 comes back through the relay with its Retry-After", { timeout: TEST_DEADLINE_MS }, async () => {
  const token = randomBytes(32).toString('hex');
  const rig = await createRelayRig({ machines: [{ machineId: 'TERM-R', terminalId: 'TERM-R', uniQr: null }], token });
  const machine = await createTestMachine({
    terminalId: 'TERM-R',
    uniQr: 'QR-R',
    token,
    rateLimit: { perSecond: 1, burst: 1 },
    keyring: rig.kit.machineKeyring,
  });
  const sims = await startSimMachines({
    url: rig.broker.url,
    protocolVersion: rig.protocolVersion,
    signer: rig.kit.machineSigner,
    machines: [{ machineId: 'TERM-R', terminalId: 'TERM-R', uniQr: null }],
    answer: (_machineId, args) => machine.relayed.start(args),
    confirm: (_machineId, args) => machine.relayed.confirm(args),
  });
  try {
    const relay = await rig.startRelay();
    await until(() => relay.link.stats().machines === 1, 10_000, 'the relay to know the machine');
    // The first Start is taken (Approved); the second, right after, is over the machine's limit.
    const start = (n: number) =>
      JSON.stringify({
        AppUserId: 'u',
        SecretToken: token,
        TerminalId: 'TERM-R',
        TransactionId: `relay-ra-${process.pid}-${n}`,
      });
    const first = await postStart(relay.origin, start(1));
    assert.equal(first.status, 200);
    assert.equal(first.retryAfter, undefined);
    const second = await postStart(relay.origin, start(2));
    assert.equal(second.status, 429);
    assert.equal(second.json.Status.Code, 3);
    assert.match(second.retryAfter ?? '', /^[1-9][0-9]*$/, 'Retry-After in whole seconds, as the machine sets it');
  } finally {
    await sims.close();
    await rig.close();
    await machine.close();
  }
});
