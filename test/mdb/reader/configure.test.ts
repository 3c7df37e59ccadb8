/**
 * The configuration sequence checks every SETCONF answer (docs/decisions/real-vending-machines.md item 3): C,1 only
 * after each
 * key was taken; a refused or unanswered key keeps the reader disabled and says which key.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Harness, line, linkUp, readerConfig, sent, timeout } from './helpers.js';
import { setconfCommands } from '../../../src/mdb/reader/index.js';
import { mdbDefaults } from './helpers.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

function refusedOf(h: Harness) {
  return h.effects.flatMap((e) => (e.kind === 'config.refused' ? [e] : []));
}

test('C,1 and V are sent only when every SETCONF line was answered c,SET,OK', T, () => {
  const h = new Harness();
  const first = h.feed(linkUp);
  assert.deepEqual(sent(first)[0], 'C,0');
  assert.equal(sent(first).filter((l) => l.startsWith('C,SETCONF,')).length, h.cfg.setconf.length);
  assert.ok(!sent(first).includes('C,1'));
  const all = h.cfg.setconf.map(() => line('c,SET,OK'));
  // Answers before the board confirmed C,0 are not answers to our lines (a garbled C,0 at link open).
  assert.deepEqual(sent(h.feed(all[0]!)), []);
  assert.equal(h.model.configuring?.length, h.cfg.setconf.length, 'an OK before the C,0 echo takes no key');
  assert.deepEqual(sent(h.feed(line('c,0'), ...all.slice(0, -1))), [], 'nothing before the last answer');
  assert.deepEqual(sent(h.feed(all.at(-1)!)), ['C,1', 'V']);
  assert.ok(h.effects.some((e) => e.kind === 'config.done'));
});

const oks = (n: number) => Array.from({ length: n }, () => line('c,SET,OK'));

test(
  'the address key refused under both spellings keeps the reader disabled and names the key and the answer',
  T,
  () => {
    const h = new Harness();
    const out = h.feed(linkUp, line('c,0'), line('c,ERR,SETCONF -1'), ...oks(h.cfg.setconf.length - 1));
    assert.ok(sent(out).includes('C,SETCONF,mdb-addr=0x10'), 'the other spelling is tried');
    assert.equal(refusedOf(h).length, 0, 'not refused while the other spelling is pending');
    h.feed(line('c,ERR,SETCONF -1'));
    const refused = refusedOf(h);
    assert.equal(refused.length, 1);
    assert.deepEqual(
      { key: refused[0]!.key, answer: refused[0]!.answer },
      { key: 'mdb-addr', answer: 'c,ERR,SETCONF -1' },
    );
    // The other answers, the VMC's statuses, a fleet enable: none of them may enable the reader.
    const later = h.feed(
      ...h.cfg.setconf.map(() => line('c,SET,OK')),
      line('c,STATUS,DISABLED'),
      line('c,STATUS,ENABLED'),
      { kind: 'payment', message: { type: 'reader.service', outOfService: false } },
    );
    assert.ok(!sent(later).includes('C,1'), `no C,1 after a refusal: ${sent(later)}`);
    assert.notEqual(h.model.configRefused, null);
  },
);

test(
  'a firmware that knows only mdb-addr: the address is set under that ' +
    'name, then C,1; a site that names the key gets no second try',
  T,
  () => {
    const h = new Harness();
    h.feed(linkUp, line('c,0'), line('c,ERR,SETCONF -1'), ...oks(h.cfg.setconf.length - 1));
    assert.deepEqual(sent(h.feed(line('c,SET,OK'))), ['C,1', 'V']);
    assert.ok(h.effects.some((e) => e.kind === 'config.alias' && e.key === 'mdb-address' && e.alias === 'mdb-addr'));
    assert.equal(refusedOf(h).length, 0);

    const named = new Harness(readerConfig({ setconfAliases: {} }));
    const out = named.feed(linkUp, line('c,0'), line('c,ERR,SETCONF -1'));
    assert.ok(!sent(out).some((l) => l.startsWith('C,SETCONF,mdb-addr=')));
    assert.equal(refusedOf(named)[0]!.key, 'mdb-address');
  },
);

test('the refusal names the key the answer belongs to (the third key here)', T, () => {
  const h = new Harness();
  h.feed(linkUp, line('c,0'), line('c,SET,OK'), line('c,SET,OK'), line('c,ERR,UNKNOWN PARAM'));
  assert.equal(refusedOf(h)[0]!.key, h.cfg.setconf[2]!.kind === 'setconf' ? h.cfg.setconf[2]!.key : '');
});

test('an unanswered key is reported with the time waited, and the link restarted', T, () => {
  const h = new Harness();
  h.feed(linkUp, line('c,0'), line('c,SET,OK'));
  const out = h.feed(timeout('config-answer'));
  const refused = refusedOf(h);
  assert.equal(refused.length, 1);
  assert.match(refused[0]!.answer, /no answer within 5000 ms/);
  assert.equal(refused[0]!.key, 'mdb-always-idle');
  assert.ok(out.some((e) => e.kind === 'link.restart'));
  assert.equal(h.state, 'Offline');
});

test('a site can rename board keys (mdb.boardKeys) and pick cashless #2', T, () => {
  const cmds = setconfCommands({
    mdb: { ...mdbDefaults, device: 'cashless2', boardKeys: { address: 'mdb-addr' } },
    decimalPlaces: 2,
    currencyNumeric: '978',
  });
  assert.deepEqual(cmds[0], { kind: 'setconf', key: 'mdb-addr', value: '0x60' });
  const plain = setconfCommands({ mdb: mdbDefaults, decimalPlaces: 2, currencyNumeric: '978' });
  assert.deepEqual(plain[0], { kind: 'setconf', key: 'mdb-address', value: '0x10' });
  assert.ok(
    !plain.some((c) => c.kind === 'setconf' && c.key === 'mdb-cashsale-enabled'),
    'optional keys are not sent unless set',
  );
  const cash = setconfCommands({
    mdb: { ...mdbDefaults, cashSale: true, boardTimeouts: { idleS: 40, messageS: null } },
    decimalPlaces: 2,
    currencyNumeric: '978',
  });
  assert.deepEqual(cash.slice(-2), [
    { kind: 'setconf', key: 'mdb-cashsale-enabled', value: '1' },
    { kind: 'setconf', key: 'mdb-timeout-idle', value: '40' },
  ]);
});

test('a hold (VMC reset loop) disables the reader at once and releases it with C,1', T, () => {
  const h = new Harness();
  h.feed(linkUp, line('c,0'), ...h.cfg.setconf.map(() => line('c,SET,OK')), line('v,1,B'), line('c,STATUS,DISABLED'));
  assert.deepEqual(sent(h.feed({ kind: 'hold', reason: 'VMC reset loop' })), ['C,0']);
  assert.deepEqual(
    sent(h.feed(line('c,STATUS,INACTIVE'), line('c,STATUS,DISABLED'))),
    [],
    'held: nothing re-enables it',
  );
  assert.deepEqual(sent(h.feed({ kind: 'hold', reason: null })), ['C,1']);
});

test('session profiles: an unused virtual session is refreshed; without multi-vend it ends after a vend', T, () => {
  const cfg = readerConfig({ alwaysIdle: false, virtualCreditMinor: 1000, sessionRefreshMs: 20_000, multiVend: false });
  const h = new Harness(cfg);
  h.feed(linkUp, line('c,0'), ...cfg.setconf.map(() => line('c,SET,OK')), line('v,1,B'), line('c,STATUS,DISABLED'));
  assert.deepEqual(sent(h.feed(line('c,STATUS,ENABLED'))), ['C,START,10.00']);
  const opened = h.feed(line('c,STATUS,IDLE,10.00'));
  assert.ok(opened.some((e) => e.kind === 'timer.arm' && e.timer === 'session-refresh' && e.ms === 20_000));
  assert.deepEqual(sent(h.feed(timeout('session-refresh'))), ['C,STOP']);
  assert.deepEqual(sent(h.feed(line('c,STATUS,ENABLED'))), ['C,START,10.00'], 'a fresh session');
  h.feed(line('c,STATUS,IDLE,10.00'), line('c,STATUS,VEND,1.00,3'));
  const approved = h.feed({
    kind: 'payment',
    message: { type: 'vend.approve', requestId: 'rq-1', txId: 'D1', amount: 1 },
  });
  assert.deepEqual(sent(approved), ['C,VEND,1.00']);
  assert.deepEqual(sent(h.feed(line('c,VEND,SUCCESS'))), ['C,STOP'], 'single vend: the session ends');
});

test(
  'a C,0 garbled at link open (glued to a line the board had half-received): the ' +
    'refusals behind it name no key; the link is opened again and the sequence resent',
  T,
  () => {
    // Seen on the emulated Pi after a power cut: the tty echoed the board's polls back to it until
    // the port was set raw, so the board read `r,ACC,0`, stayed enabled and refused every SETCONF.
    const h = new Harness();
    h.feed(linkUp, line('c,ERR,CMD r,ACC,0'), ...h.cfg.setconf.map(() => line('c,ERR,SETCONF -1')));
    assert.equal(refusedOf(h).length, 0, 'no key is blamed for a C,0 the board never took');
    const out = h.feed(timeout('config-answer'));
    assert.equal(refusedOf(h).length, 0);
    const restart = out.find((e) => e.kind === 'link.restart');
    assert.match(restart?.kind === 'link.restart' ? restart.reason : '', /did not confirm C,0/);
    assert.equal(h.state, 'Offline');
    // The link opened again: this time the board takes C,0, and the reader comes up.
    const again = h.feed(linkUp, line('c,0'), ...h.cfg.setconf.map(() => line('c,SET,OK')));
    assert.deepEqual(sent(again).slice(-2), ['C,1', 'V']);
    assert.equal(h.model.configRefused, null);
  },
);
