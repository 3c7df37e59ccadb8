/**
 * What a machine signs (src/trust/machine-sig.ts): its status facts and its replies, bound to the
 * machine, the topic, the key and the machine's own order (boot, connection, sequence).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { generateMachineKey } from '../../src/trust/machine-key.js';
import {
  checkMachineReply,
  checkMachineStatus,
  machineKeyring,
  MachineSigner,
  REPLY_LIFETIME_MS,
  statusIsNewer,
  WILL_LIFETIME_MS,
} from '../../src/trust/machine-sig.js';
import { publicKeyFromRaw } from '../../src/trust/keys.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const made = generateMachineKey();
const ring = machineKeyring([{ id: made.entry.id, key: publicKeyFromRaw(made.entry.publicKey) }]);
const signer = () => {
  const s = new MachineSigner('M1', made.entry.id, createPrivateKey(made.privatePem));
  s.nextConnection();
  return s;
};
const ON = { online: true, acceptsRelayedStart: true, terminalId: 'T1', uniQr: 'Q1' };
const reply = {
  command: 'start',
  correlationId: 'c-1',
  ok: true,
  result: {
    httpStatus: 200,
    contentType: 'application/json; charset=utf-8',
    body: '{"Status":{"Verdict":"Approved"}}',
  },
};

test('a status verifies for its machine and facts only', T, () => {
  const now = Date.now();
  const sig = signer().status(ON, now);
  assert.equal(checkMachineStatus('M1', ON, sig, ring, now).ok, true);
  const refusal = (r: ReturnType<typeof checkMachineStatus>) => (r.ok ? 'ok' : r.reason);
  assert.equal(refusal(checkMachineStatus('M2', ON, sig, ring, now)), 'bad-signature');
  assert.equal(
    refusal(checkMachineStatus('M1', { ...ON, acceptsRelayedStart: false }, sig, ring, now)),
    'bad-signature',
  );
  assert.equal(refusal(checkMachineStatus('M1', { ...ON, terminalId: 'T2' }, sig, ring, now)), 'bad-signature');
  assert.equal(refusal(checkMachineStatus('M1', ON, { ...sig, seq: sig.seq + 1 }, ring, now)), 'bad-signature');
  assert.equal(refusal(checkMachineStatus('M1', ON, undefined, ring, now)), 'unsigned');
  assert.equal(refusal(checkMachineStatus('M1', ON, { boot: 'x' }, ring, now)), 'malformed');
  assert.equal(refusal(checkMachineStatus('M1', ON, sig, null, now)), 'no-machine-key');
  assert.equal(refusal(checkMachineStatus('M1', ON, sig, machineKeyring([]), now)), 'no-machine-key');
  assert.equal(refusal(checkMachineStatus('M1', ON, sig, ring, now + 16 * 60_000)), 'expired');
});

test('a reply verifies for its correlation id and answer only; a status signature is no reply', T, () => {
  const now = Date.now();
  const s = signer();
  const sig = s.reply(reply, now);
  assert.equal(checkMachineReply('M1', reply, sig, ring, now).ok, true);
  const refusal = (r: ReturnType<typeof checkMachineReply>) => (r.ok ? 'ok' : r.reason);
  assert.equal(refusal(checkMachineReply('M1', { ...reply, correlationId: 'c-2' }, sig, ring, now)), 'bad-signature');
  assert.equal(
    refusal(
      checkMachineReply(
        'M1',
        { ...reply, result: { ...reply.result, body: '{"Status":{"Verdict":"Declined","Code":30}}' } },
        sig,
        ring,
        now,
      ),
    ),
    'bad-signature',
  );
  assert.equal(
    refusal(checkMachineReply('M1', { ...reply, ok: false, error: { code: 'BUSY', message: 'x' } }, sig, ring, now)),
    'bad-signature',
  );
  assert.notEqual(refusal(checkMachineReply('M1', reply, s.status(ON, now), ring, now)), 'ok');
  assert.equal(refusal(checkMachineReply('M1', reply, sig, ring, now + REPLY_LIFETIME_MS + 31_000)), 'expired');
});

test(
  "the machine's order: later sequence, the connection's will, a later connection; across boots the later issue",
  T,
  () => {
    const now = Date.now();
    const s = signer();
    const will1 = s.will(now);
    const a = s.status(ON, now);
    const b = s.status(ON, now);
    assert.ok(statusIsNewer(b, a) && !statusIsNewer(a, b));
    assert.ok(statusIsNewer(will1, b), "the will ends its connection's statuses");
    assert.ok(!statusIsNewer(b, will1));
    s.nextConnection();
    const c = s.status(ON, now);
    assert.ok(statusIsNewer(c, will1) && !statusIsNewer(will1, c));
    assert.equal(will1.signature.expiresAt - will1.signature.issuedAt, WILL_LIFETIME_MS);
    assert.equal(
      checkMachineStatus(
        'M1',
        { online: false, acceptsRelayedStart: false, terminalId: null, uniQr: null },
        will1,
        ring,
        now + 30 * 24 * 3600_000,
      ).ok,
      true,
      'a will fires whenever its connection ends',
    );
    const reboot = signer();
    const later = reboot.status(ON, now + 1);
    assert.ok(statusIsNewer(later, c) && !statusIsNewer(c, later));
  },
);
