/** Out of service from afar (fleet reader.disable / reader.enable): C,0 after the running session, C,1 when lifted. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { line, pay, posted, reach, sent } from './helpers.js';

const T = { timeout: 5_000 };
const outOfService = (on: boolean) => pay({ type: 'reader.service', outOfService: on });

test('an idle reader is disabled at once (C,0); new sessions are refused', T, () => {
  const h = reach.Enabled();
  assert.deepEqual(sent(h.feed(outOfService(true))), ['C,0']);
  assert.equal(h.state, 'Disabled');
  const out = h.feed(pay({ type: 'session.begin', txId: 'T9', funds: 5 }));
  assert.deepEqual(posted(out), [
    { type: 'session.refused', txId: 'T9', reason: 'the reader is out of service (fleet reader.disable)' },
  ]);
  assert.deepEqual(sent(out), []);
});

test('a running session finishes first; the C,0 follows its end', T, () => {
  const h = reach.SessionIdle();
  assert.deepEqual(sent(h.feed(outOfService(true))), [], 'nothing while the session runs');
  h.feed(line('c,STATUS,VEND,1.50,12'));
  h.feed(line('c,VEND,SUCCESS'));
  assert.equal(h.state, 'SessionIdle', 'the consumer may still buy');
  assert.deepEqual(sent(h.feed(line('c,STATUS,ENABLED'))), ['C,0'], 'the VMC ended the session: disabled');
  assert.equal(h.state, 'Disabled');
});

test('lifting it enables the reader again (C,1); the VMC then sets it up as after a reset', T, () => {
  const h = reach.Enabled();
  h.feed(outOfService(true));
  assert.deepEqual(sent(h.feed(outOfService(false))), ['C,1']);
  assert.equal(h.state, 'Inactive');
  h.feed(line('c,STATUS,DISABLED'), line('c,STATUS,ENABLED'));
  assert.equal(h.state, 'Enabled');
});

test('a board that restarts and enables the reader while out of service is disabled again', T, () => {
  const h = reach.Enabled();
  h.feed(outOfService(true));
  h.feed(line('v,1.0,B1')); // an unasked version line: the board restarted, the configuration is sent again
  h.feed(line('c,0'), ...h.cfg.setconf.map(() => line('c,SET,OK'))); // every key taken: C,1 and V follow
  assert.deepEqual(sent(h.feed(line('c,STATUS,DISABLED'), line('c,STATUS,ENABLED'))), ['C,0']);
  assert.equal(h.state, 'Disabled');
});
