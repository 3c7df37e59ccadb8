/** The VMC simulator answers like the board, keeps a true record, and its script is checked strictly. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryWire, LineFramer, type ByteLink } from '../../../src/mdb/transport/index.js';
import { VmcSimulator, parseScript, dispensedTotal } from '../../../src/sim/vmc/index.js';
import { isQrvendError } from '../../../src/core/errors.js';
import { waitFor } from '../../mdb/support.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

/** The host side, by hand: send commands, collect lines (r,ACK filtered out). */
async function host() {
  const wire = new MemoryWire();
  const link: ByteLink = await wire.openAgent();
  const lines: string[] = [];
  const framer = new LineFramer(4096, {
    onLine: (l) => l !== 'r,ACK' && lines.push(l),
    onOverlong: () => lines.push('<overlong>'),
  });
  link.onData((c) => framer.push(c));
  const sim = new VmcSimulator({ link: wire.vmcEnd, pollIntervalMs: 1000, seed: 1 });
  const send = async (...cmds: string[]) => {
    for (const c of cmds) link.write(`${c}\r\n`);
    await new Promise((r) => setTimeout(r, 20));
  };
  /** Waits for at least n lines (under load they can take a while), then takes them all. */
  const take = async (n = 0) => {
    await waitFor(`${n} lines (have ${JSON.stringify(lines)})`, () => lines.length >= n, 2000);
    return lines.splice(0, lines.length);
  };
  /** Host-enables the reader and waits for the VMC to enable it. */
  const enable = async (...setconf: string[]) => {
    await send('C,0', ...setconf, 'C,1');
    await waitFor('reader enabled', () => sim.state().reader === 'enabled', 2000);
    // The state flips before its lines cross the wire: take them once they are here.
    await waitFor('c,STATUS,ENABLED received', () => lines.includes('c,STATUS,ENABLED'), 2000);
    await take();
  };
  /** Sends an approval and waits until the VMC has taken it. */
  const approve = async (amount: string) => {
    await send(`C,VEND,${amount}`);
    await waitFor('approval taken', () => sim.state().vend === 'approved', 2000);
  };
  return { sim, send, take, lines, enable, approve };
}

test('configuration, enable and setup: the answers the board gives', { timeout: TEST_DEADLINE_MS }, async () => {
  const h = await host();
  try {
    await h.send('V', 'C,0', 'C,SETCONF,mdb-always-idle=1', 'C,1');
    assert.deepEqual(await h.take(7), [
      'v,qrvend-sim-1.0,SIMVMC0001',
      'c,0',
      'c,SET,OK',
      'c,1',
      'c,STATUS,INACTIVE',
      'c,STATUS,DISABLED',
      'c,STATUS,ENABLED',
    ]);
    await h.send('C,SETCONF,mdb-addr=0x10');
    assert.deepEqual(await h.take(1), ['c,ERR,SETCONF -1'], 'configuration only while disabled');
    await h.send('C,BOGUS');
    assert.deepEqual(await h.take(1), ['c,ERR,CMD unknown']);
  } finally {
    await h.sim.close();
  }
});

test(
  'C,START needs an enabled reader; a funded session, vends and records',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const h = await host();
    try {
      await h.send('C,START,5.00');
      assert.deepEqual(await h.take(1), ['c,ERR,START -3']);
      await h.enable();
      await h.send('C,START,5.00');
      assert.deepEqual(await h.take(1), ['c,STATUS,IDLE,5.00']);
      assert.ok(h.sim.select(12, 1.5));
      await h.approve('1.50');
      assert.ok(h.sim.vendSuccess());
      assert.ok(h.sim.select(13, 9));
      await h.send('C,VEND,-1');
      await waitFor('denial taken', () => h.sim.state().vend === 'none', 2000);
      assert.equal(h.sim.vendSuccess(), false, 'nothing approved to dispense');
      assert.ok(h.sim.select(14, 1));
      await h.approve('1.00');
      assert.equal(h.sim.cancel(), false, 'cannot cancel while dispensing');
      assert.ok(h.sim.vendFailure());
      assert.ok(h.sim.endSession());
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(await h.take(6), [
        'c,STATUS,VEND,1.50,12',
        'c,VEND,SUCCESS',
        'c,STATUS,VEND,9.00,13',
        'c,STATUS,VEND,1.00,14',
        'c,ERR,VEND 3',
        'c,STATUS,ENABLED',
      ]);
      const [rec] = h.sim.records();
      assert.deepEqual(rec, {
        id: 1,
        kind: 'funded',
        funds: 5,
        end: 'complete',
        vends: [
          { item: 12, price: 1.5, approved: 1.5, outcome: 'success' },
          { item: 13, price: 9, approved: null, outcome: 'denied' },
          { item: 14, price: 1, approved: 1, outcome: 'failed' },
        ],
      });
      assert.equal(dispensedTotal(rec!), 1.5);
      await h.send('C,STOP');
      assert.deepEqual(await h.take(1), ['c,ERR,STOP -1']);
    } finally {
      await h.sim.close();
    }
  },
);

test('reset mid-vend, board reset, silence, automatic vend policy', { timeout: TEST_DEADLINE_MS }, async () => {
  const h = await host();
  try {
    await h.enable();
    await h.send('C,START,2.00');
    await h.take(1);
    assert.ok(h.sim.select(1, 1));
    await h.approve('1.00');
    h.sim.resetReader();
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(await h.take(5), [
      'c,STATUS,VEND,1.00,1',
      'c,ERR,VEND 5',
      'c,STATUS,INACTIVE',
      'c,STATUS,DISABLED',
      'c,STATUS,ENABLED',
    ]);
    assert.equal(h.sim.records()[0]!.end, 'vmc-reset');
    assert.equal(h.sim.records()[0]!.vends[0]!.outcome, 'reset');

    h.sim.resetBoard();
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(await h.take(1), ['v,qrvend-sim-1.0,SIMVMC0001']);
    assert.equal(h.sim.state().hostEnabled, false);

    h.sim.silent(100);
    await h.send('V');
    assert.deepEqual(await h.take(0), [], 'silent: no answer');
    await new Promise((r) => setTimeout(r, 120));
    await h.send('V');
    assert.equal((await h.take(1)).length, 1);

    h.sim.setVendPolicy('success');
    await h.enable();
    await h.send('C,START,3.00');
    await h.take(1);
    assert.ok(h.sim.select(2, 1));
    await h.send('C,VEND,1.00');
    await waitFor('automatic success', () => h.lines.includes('c,VEND,SUCCESS'), 2000);
  } finally {
    await h.sim.close();
  }
});

test('always-idle selections without a session are recorded per vend', { timeout: TEST_DEADLINE_MS }, async () => {
  const h = await host();
  try {
    assert.equal(h.sim.select(1, 1), false, 'not enabled yet');
    await h.enable('C,SETCONF,mdb-always-idle=1');
    assert.ok(h.sim.select(7, 2.5));
    await h.approve('2.50');
    h.sim.vendSuccess();
    assert.ok(h.sim.select(8, 1));
    h.sim.cancel();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(await h.take(4), [
      'c,STATUS,VEND,2.50,7',
      'c,VEND,SUCCESS',
      'c,STATUS,VEND,1.00,8',
      'c,ERR,VEND 1',
    ]);
    assert.deepEqual(
      h.sim.records().map((r) => [r.kind, r.end, r.vends[0]!.outcome]),
      [
        ['always-idle', 'complete', 'success'],
        ['always-idle', 'consumer-cancel', 'cancelled'],
      ],
    );
  } finally {
    await h.sim.close();
  }
});

test('noise lines are terminated and never valid', { timeout: TEST_DEADLINE_MS }, async () => {
  const h = await host();
  try {
    await h.sim.noise(300);
    await new Promise((r) => setTimeout(r, 50));
    const { parseBoardLine } = await import('../../../src/mdb/codec/index.js');
    assert.equal(h.lines.length, 300);
    for (const l of h.lines) assert.ok(l === '<overlong>' || !parseBoardLine(l).ok, `valid line in noise: ${l}`);
  } finally {
    await h.sim.close();
  }
});

test('the script is parsed strictly, with the line number in the error', () => {
  const steps = parseScript(
    '# a demo\nenable\nselect 12 1.50   # cola\nsuccess\nfail\nfail ' +
      '5\nwait 500\nsilent 5000\nnoise 100\nauto success\nend\n',
  );
  assert.deepEqual(steps, [
    { op: 'enable' },
    { op: 'select', item: 12, price: 1.5 },
    { op: 'success' },
    { op: 'fail', code: 3 },
    { op: 'fail', code: 5 },
    { op: 'wait', ms: 500 },
    { op: 'silent', ms: 5000 },
    { op: 'noise', count: 100 },
    { op: 'auto', policy: 'success' },
    { op: 'end' },
  ]);
  for (const [bad, why] of [
    ['enable\nselect 12', /line 2.*select takes 2 arguments/],
    ['select x 1.00', /item must be a whole number/],
    ['select 1 1,50', /price must be a decimal/],
    ['dance', /unknown command "dance"/],
    ['auto maybe', /success, fail or manual/],
  ] as const) {
    assert.throws(
      () => parseScript(bad),
      (e: unknown) => isQrvendError(e, 'CLI_USAGE') && why.test(e.message),
    );
  }
});

test(
  'field boards and VMCs: unknown and ignored SETCONF keys, the address, a card reader that wins a selection',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const wire = new MemoryWire();
    const link: ByteLink = await wire.openAgent();
    const lines: string[] = [];
    const framer = new LineFramer(4096, { onLine: (l) => l !== 'r,ACK' && lines.push(l), onOverlong: () => {} });
    link.onData((c) => framer.push(c));
    const sim = new VmcSimulator({
      link: wire.vmcEnd,
      pollIntervalMs: 1000,
      firmwareKeys: { knownKeys: ['mdb-addr', 'mdb-always-idle'], addressKey: 'mdb-addr', silentKeys: ['mdb-timeout'] },
      quirks: { slots: ['0x10', '0x60'], cardReader: '0x10' },
    });
    try {
      for (const c of [
        'C,0',
        'C,SETCONF,mdb-address=0x60',
        'C,SETCONF,mdb-timeout=5',
        'C,SETCONF,mdb-addr=0x60',
        'C,SETCONF,mdb-always-idle=1',
        'C,1',
      ])
        link.write(`${c}\r\n`);
      await waitFor('enabled at 0x60', () => sim.state().reader === 'enabled', 2000);
      await waitFor('lines', () => lines.includes('c,STATUS,ENABLED'), 2000);
      assert.deepEqual(
        lines.slice(0, 4),
        ['c,0', 'c,ERR,SETCONF mdb-address', 'c,SET,OK', 'c,SET,OK'],
        'refused, silent (no line), then taken',
      );
      assert.ok(sim.select(4, 1));
      assert.ok(sim.cardSale(4, 1), 'the card reader takes the selection');
      await waitFor(
        're-enabled',
        () => sim.state().reader === 'enabled' && lines.filter((l) => l === 'c,STATUS,ENABLED').length === 2,
        2000,
      );
      assert.ok(lines.includes('c,ERR,VEND 1') && lines.includes('c,STATUS,DISABLED'));
      assert.deepEqual(sim.cardSaleRecords(), [{ item: 4, price: 1, tookOurSelection: true }]);
      assert.deepEqual(parseScript('card 7 2.00'), [{ op: 'card', item: 7, price: 2 }]);
    } finally {
      await sim.close();
    }
  },
);

test('a VMC that has only slot #1 never sets up a board at 0x60', { timeout: TEST_DEADLINE_MS }, async () => {
  const wire = new MemoryWire();
  const link: ByteLink = await wire.openAgent();
  const sim = new VmcSimulator({ link: wire.vmcEnd, pollIntervalMs: 20, quirks: { slots: ['0x10'] } });
  let polls = 0;
  const framer = new LineFramer(4096, { onLine: (l) => l === 'r,ACK' && (polls += 1), onOverlong: () => {} });
  link.onData((c) => framer.push(c));
  try {
    for (const c of ['C,0', 'C,SETCONF,mdb-address=0x60', 'C,1']) link.write(`${c}\r\n`);
    await waitFor('host-enabled', () => sim.state().hostEnabled, 2000);
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(sim.state().reader, 'inactive');
    assert.equal(polls, 0, 'no POLL reaches a device the VMC does not know');
  } finally {
    await sim.close();
  }
});
