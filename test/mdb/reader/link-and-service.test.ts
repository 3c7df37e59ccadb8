/**
 * The reader's link, configuration and out-of-service handling (src/mdb/reader transition.ts):
 * what is in flight when the link is reopened or goes quiet, a SETCONF the board never answered,
 * and the fleet's reader.disable (C,0 once no session runs, C,1 when enabled again).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Harness, line, linkUp, pay, posted, reach, readerConfig, sent } from './helpers.js';

test('the link reopened during a session: the session ends as link lost before the reader is set up again', () => {
  const h = reach.SessionIdle();
  const out = h.feed(linkUp);
  assert.deepEqual(posted(out), [
    { type: 'session.ended', txId: 'T1', reason: 'link-lost', vendsSucceeded: 0, amountVended: 0 },
  ]);
  assert.equal(sent(out)[0], 'C,0', 'then configured again');
  assert.equal(h.state, 'Inactive');
});

test('a link already down going down again does nothing', () => {
  const h = new Harness();
  assert.deepEqual(h.feed({ kind: 'link.down', reason: 'again' }), []);
  assert.equal(h.state, 'Offline');
});

test('the link lost asks for the version again when it comes back', () => {
  const h = reach.Enabled();
  h.feed({ kind: 'link.down', reason: 'unplugged' });
  assert.equal(h.model.versionAsked, false, 'a v,... line before the next V is a board restart, not our answer');
  const s = reach.Enabled();
  s.feed({ kind: 'link.silent' });
  assert.equal(s.model.versionAsked, false);
});

test('silence while a SETCONF waits for its answer: the key is reported refused and the link restarted', () => {
  const h = new Harness();
  h.feed(linkUp, line('c,0'));
  const first = h.cfg.setconf[0];
  assert.ok(first && first.kind === 'setconf');
  const out = h.feed({ kind: 'link.silent' });
  assert.deepEqual(
    out.filter((e) => e.kind === 'config.refused'),
    [
      {
        kind: 'config.refused',
        key: first.key,
        value: first.value,
        answer: 'no answer before the link watchdog expired',
      },
    ],
  );
  assert.ok(out.some((e) => e.kind === 'link.restart'));
  assert.equal(h.state, 'Offline');
});

test('silence after every SETCONF was answered blames no key', () => {
  const h = new Harness();
  h.feed(linkUp, line('c,0'), ...h.cfg.setconf.map(() => line('c,SET,OK')));
  const out = h.feed({ kind: 'link.silent' });
  assert.deepEqual(
    out.filter((e) => e.kind === 'config.refused'),
    [],
  );
  assert.ok(out.some((e) => e.kind === 'link.restart'));
});

test('a forced stop with the link down writes nothing to the board', () => {
  const h = new Harness();
  const out = h.feed({ kind: 'shutdown.force' });
  assert.deepEqual(sent(out), []);
  assert.equal(h.model.shuttingDown, true, 'no session may open afterwards');
});

test('out of service during configuration: C,1 and C,0 are left to the configuration', () => {
  const h = new Harness();
  h.feed(linkUp, line('c,0'));
  const out = h.feed(pay({ type: 'reader.service', outOfService: true }));
  assert.deepEqual(sent(out), []);
  assert.equal(h.model.hostDisabled, false);
});

test('a hold after the board refused a key writes nothing, and its release does not enable the reader', () => {
  // The refused key left the reader disabled (C,0, no C,1); a C,1 now would let the VMC use a misconfigured reader.
  const h = new Harness();
  h.feed(linkUp, line('c,0'));
  for (let i = 0; i < 3 && h.model.configRefused === null; i++) h.feed(line('c,ERR,SETCONF'));
  assert.ok(h.model.configRefused !== null, 'the board refused a key');
  assert.deepEqual(sent(h.feed({ kind: 'hold', reason: 'reset loop' })), []);
  assert.deepEqual(sent(h.feed({ kind: 'hold', reason: null })), [], 'no C,1');
});

test('a hold during configuration: no C,0 among the SETCONF lines, and no C,1 once they are all answered', () => {
  const h = new Harness();
  h.feed(linkUp, line('c,0'));
  assert.deepEqual(sent(h.feed({ kind: 'hold', reason: 'reset loop' })), []);
  const answers = h.cfg.setconf.map(() => line('c,SET,OK'));
  const out = h.feed(...answers);
  assert.deepEqual(sent(out), ['V'], 'the C,0 that opened the configuration keeps the reader off the bus');
  assert.equal(h.model.hostDisabled, true);
  assert.equal(h.state, 'Disabled');
  assert.deepEqual(sent(h.feed(line('v,1,B'), { kind: 'hold', reason: null })), ['C,1'], 'enabled when the hold ends');
});

test('a hold during a paid session waits for the session to end before disabling the reader', () => {
  const h = reach.SessionIdle();
  const out = h.feed({ kind: 'hold', reason: 'reset loop' });
  assert.deepEqual(sent(out), [], 'no C,0 under an open paid session');
  assert.equal(h.state, 'SessionIdle');
  h.feed(pay({ type: 'session.cancel', txId: 'T1', reason: 'test' }));
  assert.deepEqual(sent(h.feed(line('c,STATUS,ENABLED'))), ['C,0']);
});

test(
  'shutdown with a Dynamic QR vend waiting for payment: its ' +
    "request ends as the machine's doing, not the consumer's",
  () => {
    // byConsumer decides the reason code of the Void downstream.
    const h = reach.DynamicAwaitingPayment();
    const ended = posted(h.feed({ kind: 'shutdown' }));
    assert.deepEqual(
      ended.map((m) => m.type === 'vend.request.ended' && m.byConsumer),
      [false],
    );
  },
);

test('always-idle off and no virtual credit configured: ENABLED opens no session', () => {
  const h = reach.Disabled(readerConfig({ alwaysIdle: false, virtualCreditMinor: null }));
  assert.deepEqual(sent(h.feed(line('c,STATUS,ENABLED'))), []);
  assert.deepEqual(h.model.state, { kind: 'Enabled', holdVirtual: false });
});

test('out of service with a virtual-credit session open: the session is stopped first, C,0 once it closed', () => {
  const h = reach.Enabled(readerConfig({ alwaysIdle: false, virtualCreditMinor: 100 }));
  h.feed(line('c,STATUS,IDLE,1.00'));
  const out = h.feed(pay({ type: 'reader.service', outOfService: true }));
  assert.deepEqual(sent(out), ['C,STOP']);
  assert.deepEqual(posted(out), []);
  assert.deepEqual(sent(h.feed(line('c,STATUS,ENABLED'))), ['C,0']);
  assert.equal(h.state, 'Disabled');
});

test('out of service while the VMC has the reader inactive or disabled: C,0 waits for the VMC to enable it', () => {
  for (const at of ['Inactive', 'Disabled'] as const) {
    const h = reach[at]();
    assert.deepEqual(sent(h.feed(pay({ type: 'reader.service', outOfService: true }))), [], at);
    assert.deepEqual(sent(h.feed(line('c,STATUS,ENABLED'))), ['C,0'], at);
    assert.equal(h.model.hostDisabled, true, at);
  }
});

test('a hold disables the reader at once, even before the VMC enables it, and only once', () => {
  const h = reach.Inactive();
  assert.deepEqual(sent(h.feed({ kind: 'hold', reason: 'reset loop' })), ['C,0']);
  assert.equal(h.state, 'Disabled');
  assert.deepEqual(sent(h.feed(line('c,STATUS,DISABLED'))), [], 'already disabled by us: no second C,0');
});

test('the link lost while out of service: the reader is enabled again by the next configuration, not twice', () => {
  const h = reach.Enabled();
  h.feed(pay({ type: 'reader.service', outOfService: true }));
  assert.equal(h.model.hostDisabled, true);
  h.feed({ kind: 'link.down', reason: 'unplugged' });
  assert.equal(h.model.hostDisabled, false, 'the C,0 written before the link was lost no longer stands');
});

test(
  'a session the consumer cancelled a selection in, then disabled ' +
    "by the VMC, ends as disabled, not as the consumer's cancel",
  () => {
    // consumer-cancel is kept for a session that ends on its own (c,STATUS,ENABLED); a disable is the machine's doing.
    const h = reach.SessionIdle();
    h.feed(line('c,ERR,VEND 1'));
    assert.ok(h.model.state.kind === 'SessionIdle' && h.model.state.session.consumerCancelled);
    const out = h.feed(line('c,STATUS,DISABLED'));
    assert.deepEqual(
      posted(out).map((m) => m.type === 'session.ended' && m.reason),
      ['disabled'],
    );
  },
);
