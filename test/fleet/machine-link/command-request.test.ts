/** Reading commands off the wire: every input yields a request, an error to answer, or "not ours". */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommand } from '../../../src/fleet/machine-link/command-request.js';
import { MAX_PAYLOAD_BYTES } from '../../../src/fleet/contract/messages.js';
import { CommandRateBound } from '../../../src/fleet/machine-link/rate-bound.js';

const T = { timeout: 5_000 };
const DEFAULT_REPLY = 'qrvend/M1/replies';
const parse = (topic: string, payload: string | Buffer, props = {}) =>
  parseCommand(
    'qrvend',
    'M1',
    DEFAULT_REPLY,
    topic,
    typeof payload === 'string' ? Buffer.from(payload) : payload,
    props,
  );

test('MQTT 3.1.1: replyTo and correlationId come from the body; args are kept', T, () => {
  const r = parse(
    'qrvend/M1/cmd/outbox.retry',
    JSON.stringify({ replyTo: 'ops/replies', correlationId: 'c-1', args: { id: 3 } }),
  );
  assert.deepEqual(r, {
    kind: 'request',
    name: 'outbox.retry',
    args: { id: 3 },
    signature: undefined,
    reply: { topic: 'ops/replies', correlationId: 'c-1', correlationData: null },
    expirySeconds: null,
  });
});

test('MQTT 5: the response topic and correlation data of the packet win; an empty body is no args', T, () => {
  const r = parse('qrvend/M1/cmd/ping', '', {
    responseTopic: 'ops/r/7',
    correlationData: Buffer.from('abc'),
    messageExpiryInterval: 4,
  });
  assert.equal(r.kind, 'request');
  assert.deepEqual(r.kind === 'request' && r.reply, {
    topic: 'ops/r/7',
    correlationId: 'abc',
    correlationData: Buffer.from('abc'),
  });
  assert.equal(r.kind === 'request' && r.expirySeconds, 4);
  assert.deepEqual(r.kind === 'request' && r.args, {});
});

test(
  'unknown command, bad JSON, a non-object, oversize: error ' +
    'replies, to the default topic when the body could not be read',
  T,
  () => {
    const unknown = parse('qrvend/M1/cmd/format.disk', JSON.stringify({ correlationId: 'c-2' }));
    assert.deepEqual(unknown.kind === 'error' && [unknown.code, unknown.reply.correlationId], [
      'UNKNOWN_COMMAND',
      'c-2',
    ]);
    const bad = parse('qrvend/M1/cmd/ping', '{"correlationId":');
    assert.deepEqual(bad.kind === 'error' && [bad.code, bad.reply.topic, bad.reply.correlationId], [
      'BAD_PAYLOAD',
      DEFAULT_REPLY,
      null,
    ]);
    const array = parse('qrvend/M1/cmd/ping', '[1,2]');
    assert.equal(array.kind === 'error' && array.code, 'BAD_PAYLOAD');
    const wrongType = parse('qrvend/M1/cmd/ping', JSON.stringify({ correlationId: 5 }));
    assert.match(wrongType.kind === 'error' ? wrongType.message : '', /correlationId/);
    const big = parse('qrvend/M1/cmd/ping', Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x20));
    assert.equal(big.kind === 'error' && big.code, 'BAD_PAYLOAD');
  },
);

test("a reply topic with wildcards is not used; another machine's or a foreign topic is ignored", T, () => {
  const r = parse('qrvend/M1/cmd/ping', JSON.stringify({ replyTo: 'ops/#', correlationId: 'c' }));
  assert.equal(r.kind === 'request' && r.reply.topic, DEFAULT_REPLY);
  assert.equal(parse('qrvend/M2/cmd/ping', '{}').kind, 'ignore');
  assert.equal(parse('other/M1/cmd/ping', '{}').kind, 'ignore');
  assert.equal(parse('qrvend/M1/status', '{}').kind, 'ignore');
});

test('the command rate bound lets a burst through, then drops and counts until tokens refill', T, () => {
  const rate = new CommandRateBound(10, 20, 0);
  let allowed = 0;
  for (let i = 0; i < 100; i++) if (rate.take(0)) allowed += 1;
  assert.equal(allowed, 20);
  assert.equal(rate.dropped, 80);
  assert.equal(rate.take(100), true, 'one token back after 100 ms at 10/s');
  assert.equal(rate.take(100), false);
});

test('a member named __proto__ anywhere is refused from the text, before any object is built', T, () => {
  // A config.set naming __proto__ at the top level of `set` (and elsewhere; escapes decode first).
  for (const [text, where, code] of [
    ['{"correlationId":"c-9","args":{"set":{"__proto__":{"mdb":{"sessionIdleTimeoutMs":1}}}}}', 'args.set', 'BAD_ARGS'],
    ['{"args":{"set":{"mdb":{"\\u005f_proto__":{}}}}}', 'args.set.mdb', 'BAD_ARGS'],
    ['{"args":[{"a":1},{"__proto__":null}]}', 'args.1', 'BAD_ARGS'],
    ['{"__proto__":{"x":1}}', '', 'BAD_PAYLOAD'],
  ] as const) {
    const r = parse('qrvend/M1/cmd/config.set', text);
    assert.equal(r.kind, 'error', text);
    if (r.kind !== 'error') continue;
    assert.equal(r.code, code, text);
    assert.equal(
      r.message.startsWith(`${where === '' ? '' : `${where}.`}__proto__: a member named "__proto__"`),
      true,
      r.message,
    );
  }
  const r = parse('qrvend/M1/cmd/config.set', '{"correlationId":"c-9","args":{"set":{"__proto__":{}}}}');
  assert.equal(r.kind === 'error' && r.reply.correlationId, 'c-9', 'answered where the request asks');
  // The name as a value, or inside a string, is no member.
  const ok = parse('qrvend/M1/cmd/config.get', '{"args":{"key":"__proto__"},"correlationId":"{\\"__proto__\\":1}"}');
  assert.equal(ok.kind, 'request');
});
