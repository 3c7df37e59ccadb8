/**
 * End to end against a VMC that behaves like real ones (docs/decisions/real-vending-machines.md items 2 to 5 and 8):
 * the real
 * daemon, the VMC simulator on a pty pair, the gateway simulator. Each case builds its own rig
 * because the VMC's quirks and the board's firmware are fixed at power-up.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertLedgerClean, createBench, nextVendAnswer, until, vmcIdle, type Bench } from './support/e2e-rig.js';
import { createRig, type Rig, type RigOptions } from '../../rigs/rig.js';
import { selectAndPay } from './support/dynamic-payment.js';
import { rigFacts, vmcDoctor, vmcDoctorCli } from './support/vmc-doctor.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const ALL_KEYS_BUT_ADDRESS = [
  'mdb-addr',
  'mdb-always-idle',
  'mdb-currency-code',
  'mdb-decimal-places',
  'mdb-scale-factor',
  'mdb-timeout-vend',
];

async function withBench(options: Parameters<typeof createBench>[0], body: (b: Bench) => Promise<void>): Promise<void> {
  const bench = await createBench(options);
  try {
    await body(bench);
  } finally {
    await bench.close();
  }
}

/** A rig whose daemon is started without waiting for C,1 (the board refuses to be configured). */
async function withRefusingBoard(options: RigOptions, body: (rig: Rig) => Promise<void>): Promise<void> {
  const rig = await createRig(options);
  try {
    await rig.startAgentProcessOnly();
    await body(rig);
  } finally {
    await rig.close();
  }
}

test(
  'cashless #2 beside a card reader at #1: configured at 0x60, QR sales work and the card reader wins a selection',
  T,
  async () => {
    await withBench(
      {
        vmc: { vendPolicy: 'manual', quirks: { cardReader: '0x10' } },
        config: { mdb: { device: 'cashless2' }, dynamicQr: { paymentTimeoutMs: 1500, pollIntervalMs: 100 } },
      },
      async ({ rig }) => {
        await vmcIdle(rig);
        assert.equal(rig.vmc.state().config['mdb-address'], '0x60', 'the board was set to cashless #2');
        const pay = await selectAndPay(rig, 4, 1.5);
        assert.deepEqual(await pay.answer, { kind: 'vend-approve', amount: 1.5 });
        assert.ok(rig.vmc.vendSuccess());
        assert.equal(await pay.result, 'vended');
        assert.ok(rig.vmc.cardSale(7, 2), 'the card reader serves a selection');
        await until(
          () => rig.vmc.state().reader === 'disabled',
          5000,
          'the VMC to disable our reader while the card reader vends',
        );
        await vmcIdle(rig);
        assert.deepEqual(rig.vmc.cardSaleRecords(), [{ item: 7, price: 2, tookOurSelection: false }]);
        assertLedgerClean(rig);
      },
    );
  },
);

test(
  'cashless #2 on a board that knows the address key only as ' +
    'mdb-addr: the other spelling is tried, the reader comes up at 0x60',
  T,
  async () => {
    const firmware = { knownKeys: ALL_KEYS_BUT_ADDRESS, addressKey: 'mdb-addr' };
    await withBench(
      { vmc: { firmwareKeys: firmware, quirks: { cardReader: '0x10' } }, config: { mdb: { device: 'cashless2' } } },
      async ({ rig }) => {
        await vmcIdle(rig);
        assert.equal(rig.vmc.state().config['mdb-addr'], '0x60');
        const alias = rig.agent!.logs.find((l) => l.event === 'mdb.config.alias');
        assert.deepEqual(alias && { key: alias.key, alias: alias.alias }, { key: 'mdb-address', alias: 'mdb-addr' });
        assert.ok(!rig.agent!.logs.some((l) => l.event === 'mdb.config.refused'));
        await until(() => rigFacts(rig)?.configRefused === null, 30_000, 'facts without a refusal');
      },
    );
  },
);

test(
  'cashless #2 on a board that knows the address key under neither ' +
    'name: kept disabled, logged, doctor FAIL; mdb.boardKeys fixes it',
  T,
  async () => {
    const keys = ALL_KEYS_BUT_ADDRESS.filter((k) => k !== 'mdb-addr').concat('mdb-slave-address');
    const firmware = { knownKeys: keys, addressKey: 'mdb-slave-address' };
    await withRefusingBoard(
      { vmc: { firmwareKeys: firmware, quirks: { cardReader: '0x10' } }, config: { mdb: { device: 'cashless2' } } },
      async (rig) => {
        const line = await rig.agent!.waitForLog(
          (l) => l.event === 'mdb.config.refused',
          30_000,
          'the refusal log line',
        );
        assert.equal(line.key, 'mdb-addr', 'refused after both spellings were tried');
        assert.equal(line.answer, 'c,ERR,SETCONF mdb-addr');
        assert.equal(line.code, 'BOARD_CONFIG_REFUSED');
        await until(() => rigFacts(rig)?.configRefused?.key === 'mdb-addr', 30_000, 'the refusal in the doctor facts');
        assert.ok(!rig.vmc.received().includes('C,1'), 'the reader was never enabled');
        assert.equal(rig.vmc.state().hostEnabled, false);
        // `qrvend doctor`, a separate process, reads what the running daemon saw.
        const doctor = await vmcDoctorCli(rig);
        assert.equal(doctor.status, 'FAIL');
        assert.match(doctor.summary, /refused C,SETCONF,mdb-addr=0x60 \(answer: c,ERR,SETCONF mdb-addr\)/);
        assert.match(doctor.action!, /mdb\.boardKeys/);
      },
    );
    await withBench(
      {
        vmc: { firmwareKeys: firmware, quirks: { cardReader: '0x10' } },
        config: { mdb: { device: 'cashless2', boardKeys: { address: 'mdb-slave-address' } } },
      },
      async ({ rig }) => {
        await vmcIdle(rig);
        assert.equal(rig.vmc.state().config['mdb-slave-address'], '0x60');
        await until(() => rigFacts(rig)?.configRefused === null, 30_000, 'facts without a refusal');
      },
    );
  },
);

test('a SETCONF line the board never answers keeps the reader disabled and names the key', T, async () => {
  await withRefusingBoard({ vmc: { firmwareKeys: { silentKeys: ['mdb-timeout-vend'] } }, config: {} }, async (rig) => {
    const line = await rig.agent!.waitForLog((l) => l.event === 'mdb.config.refused', 15_000, 'the unanswered key');
    assert.equal(line.key, 'mdb-timeout-vend');
    assert.match(String(line.answer), /no answer/);
    assert.ok(!rig.vmc.received().includes('C,1'));
  });
});

test(
  'a VMC that resets the reader after every setup: the loop is ' +
    'seen, the reader held off the bus, doctor says what to try',
  T,
  async () => {
    await withBench({ vmc: { quirks: { resetAfterSetup: -1 } }, config: {} }, async ({ rig }) => {
      const line = await rig.agent!.waitForLog(
        (l) => l.event === 'mdb.vmc.reset-loop',
        15_000,
        'the reset-loop warning',
      );
      assert.equal(line.code, 'VMC_RESET_LOOP');
      assert.match(line.msg, /Try a session profile/);
      await until(() => rig.vmc.state().hostEnabled === false, 5000, 'the reader held off the bus (C,0)');
      await until(
        () => rigFacts(rig)?.resetLoop !== null && rigFacts(rig)?.resetLoop !== undefined,
        30_000,
        'the loop in the doctor facts',
      );
      const doctor = await vmcDoctor(rig);
      assert.equal(doctor.status, 'FAIL');
      assert.match(doctor.summary, /resets the reader in a loop/);
    });
  },
);

test(
  'level 2 profile: the idle session is refreshed before the VMC ' +
    'drops it; a vend outside a session is denied and reported',
  T,
  async () => {
    const config = { mdb: { profile: 'level2-session', virtualCredit: 10, sessionRefreshMs: 5000 } };
    await withBench({ vmc: { vendPolicy: 'manual', quirks: { dropIdleSessionMs: 8000 } }, config }, async ({ rig }) => {
      assert.equal(rig.vmc.state().config['mdb-always-idle'] ?? '0', '0');
      await until(
        () => rig.vmc.records().filter((r) => r.end === 'reader-stop').length >= 1 && rig.vmc.state().session,
        20_000,
        'a refreshed session',
      );
      assert.deepEqual(
        rig.vmc.records().filter((r) => r.end === 'complete'),
        [],
        'the VMC never had to drop an idle session',
      );
      const facts = rigFacts(rig);
      assert.equal(facts?.profile, 'level2-session');
      assert.ok(
        facts?.profileOverrides.includes('sessionRefreshMs') && facts.profileOverrides.includes('virtualCredit'),
        String(facts?.profileOverrides),
      );
    });
    await withBench(
      {
        vmc: { vendPolicy: 'manual', quirks: { vendOutsideSession: true } },
        config: { mdb: { profile: 'level2-session' } },
      },
      async ({ rig }) => {
        await vmcIdle(rig);
        assert.ok(rig.vmc.select(3, 1));
        assert.deepEqual(await nextVendAnswer(rig), { kind: 'vend-deny' });
        await until(
          () => (rigFacts(rig)?.vendsOutsideSession ?? 0) === 1,
          30_000,
          'the vend outside a session in the facts',
        );
        const doctor = await vmcDoctor(rig);
        assert.equal(doctor.status, 'WARN');
        assert.match(doctor.summary, /profile level2-session .*vend\(s\) outside a session/);
      },
    );
  },
);
