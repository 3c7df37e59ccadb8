/**
 * The probe of a configuration trial (src/fleet/machine-link/probe.ts): only this start's probe counts,
 * whatever else arrives on the topic; it is sent once the subscription is in place and counted once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createProbe, isOwnProbe, probeTopic } from '../../../src/fleet/machine-link/probe.js';
import { isCommandName, parseTopic } from '../../../src/fleet/contract/topics.js';

const T = { timeout: 5_000 };

test("only this start's probe counts: other nonces, other shapes, garbage and oversize are ignored", T, () => {
  const nonce = 'a'.repeat(32);
  assert.equal(isOwnProbe(Buffer.from(JSON.stringify({ probe: nonce })), nonce), true);
  for (const other of [
    JSON.stringify({ probe: 'b'.repeat(32) }),
    JSON.stringify({ probe: [nonce] }),
    JSON.stringify([nonce]),
    'null',
    '{',
    '',
    JSON.stringify({ probe: nonce, pad: 'x'.repeat(300) }),
  ]) {
    assert.equal(isOwnProbe(Buffer.from(other), nonce), false, other.slice(0, 40));
  }
});

test("the probe topic is on the machine's own command topic, and no command is named like it", T, () => {
  const topic = probeTopic('qrvend', 'VM-1');
  assert.deepEqual(parseTopic('qrvend', topic), { kind: 'command', machineId: 'VM-1', name: '_probe' });
  assert.equal(isCommandName('_probe'), false);
});

test('sent once subscribed, counted once when it comes back; foreign copies change nothing', T, () => {
  const sent: string[] = [];
  let returned = 0;
  const probe = createProbe({ publish: (body) => sent.push(body), onReturned: () => (returned += 1) });
  try {
    assert.equal(sent.length, 0, 'nothing before the subscription is in place');
    probe.subscribed();
    assert.equal(sent.length, 1);
    probe.received(Buffer.from(JSON.stringify({ probe: 'someone else' })));
    assert.equal(probe.returned, false);
    probe.received(Buffer.from(sent[0]!));
    probe.received(Buffer.from(sent[0]!));
    assert.equal(probe.returned, true);
    assert.equal(returned, 1);
    probe.subscribed();
    assert.equal(sent.length, 1, 'not sent again once back (a reconnect)');
  } finally {
    probe.stop();
  }
});
