/**
 * End to end, money and conformance in Static QR (docs/decisions/money-conformance.md): the real daemon
 * wiring in this process on the in-memory wire (rigs/in-process-rig.ts), the gateway simulator behind
 * the recording proxy, and the exact bytes the gateway received; the restart after a crash on the
 * `qrvend run` process over a pty (a SIGKILL needs a process).
 * - amounts written with the currency's decimals (10.00, 5.50, 4.35), summed exactly from prices
 *   that binary floating point holds just below their value (1.15, 4.35, 0.29);
 * - PaymentInfo sent back byte for byte as the Authorization answer carried it (10.00 stays 10.00);
 * - staticQr.verifyAge (default on): the Authorization carries the catalog's highest ageLimit, and
 *   the Settlement or Cancel repeats it;
 * - MachineAuTime of a Settlement or Cancel is the Authorization's, also when recovery builds the
 *   body after a restart: each closing is sent in a later second than its Authorization.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { memberText } from '../../src/gateway/wire/index.js';
import { readAgentTransactions } from '../../rigs/chaos/agent-ledger.js';
import type { InProcessRig } from '../../rigs/in-process-rig.js';
import type { RigOptionsBase } from '../../rigs/rig-parts.js';
import {
  assertLedgerClean,
  assertSalesBalance,
  createBench,
  createInProcessBench,
  pastSecondOf,
  until,
  vmcIdle,
  waitTx,
  type Bench,
} from './support/e2e-rig.js';
import { buy, openSession } from './support/static-session.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const BENCH: RigOptionsBase = {
  vmc: { vendPolicy: 'manual' },
  config: {
    catalog: {
      '12': { name: 'Sparkling water', measurement: 500, unitOfMeasurement: 'ml' },
      '30': { name: 'Beer', ageLimit: 18 },
      '31': { name: 'Cider', ageLimit: 16 },
    },
  },
};
let bench: Bench<InProcessRig>;
const T = { timeout: TEST_DEADLINE_MS };

before(async () => {
  bench = await createInProcessBench(BENCH);
});
after(async () => bench?.close());

/** The member `name` of a JSON text, exactly as written. */
function member(text: string | null, ...path: string[]): string | null {
  let cur: string | null = text;
  for (const name of path) cur = cur === null ? null : memberText(cur, name);
  return cur;
}

test(
  'amounts with decimals, PaymentInfo byte for byte, AgeLimitation of the catalog, MachineAuTime of the Authorization',
  T,
  async () => {
    const { rig, proxy } = bench;
    const session = await openSession(rig);
    const auth = proxy.of('Authorization', session.txId)[0]!;
    assert.equal(
      member(auth.requestText, 'BasicInfo', 'Amount'),
      '10.00',
      'Amount written as a double with 2 decimals',
    );
    assert.equal(
      member(auth.requestText, 'BasicInfo', 'AgeLimitation'),
      '18',
      'the highest ageLimit of the catalog: an approval vouches for every item',
    );
    const issued = member(auth.responseText, 'PaymentInfo')!;
    assert.match(issued, /"AuthAmount":10\.00/, 'the simulator writes its amounts with decimals too');

    await buy(rig, 12, 1.15);
    await buy(rig, 30, 4.35); // age-restricted: sold, the Authorization carried AgeLimitation 18
    // In a later second than the Authorization, so that a Settlement stamped with its own time would differ.
    await pastSecondOf(auth);
    assert.ok(rig.vmc.endSession());
    await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');

    const settle = proxy.of('Settlement', session.txId)[0]!.requestText;
    assert.equal(member(settle, 'PaymentInfo'), issued, 'PaymentInfo byte for byte as the Authorization answer had it');
    assert.equal(member(settle, 'BasicInfo', 'Amount'), '5.50');
    assert.match(
      settle,
      new RegExp(
        /"Products":\[\{"Code":12,"Price":1\.15,"Name":"Sparkling water","Measurement":500,/.source +
          /"UnitOfMeasurement":"ml"\},\{"Code":30,"Price":4\.35,"Name":"Beer"/.source,
      ),
    );
    assert.equal(
      member(settle, 'BasicInfo', 'MachineAuTime'),
      member(auth.requestText, 'BasicInfo', 'MachineAuTime'),
      'the time of the authorization it closes',
    );
    assert.equal(
      member(settle, 'BasicInfo', 'AgeLimitation'),
      '18',
      'the Settlement repeats the AgeLimitation of the Authorization',
    );
    assertLedgerClean(rig);
    assertSalesBalance(rig);
    await vmcIdle(rig);
  },
);

test(
  'nothing sold: the Cancel carries the same PaymentInfo bytes, MachineAuTime and AgeLimitation as the Authorization',
  T,
  async () => {
    const { rig, proxy } = bench;
    const session = await openSession(rig);
    const auth = proxy.of('Authorization', session.txId)[0]!;
    await pastSecondOf(auth);
    assert.ok(rig.vmc.endSession());
    await waitTx(rig, session.txId, (x) => x.state === 'cancelled', 'the Cancel');
    const cancel = proxy.of('Cancel', session.txId)[0]!.requestText;
    assert.equal(member(cancel, 'PaymentInfo'), member(auth.responseText, 'PaymentInfo'));
    assert.equal(member(cancel, 'BasicInfo', 'MachineAuTime'), member(auth.requestText, 'BasicInfo', 'MachineAuTime'));
    assert.equal(member(cancel, 'BasicInfo', 'AgeLimitation'), '18');
    assert.equal(member(cancel, 'BasicInfo', 'Amount'), '10.00');
    assertLedgerClean(rig);
    await vmcIdle(rig);
  },
);

test(
  'after a crash, recovery builds the Settlement with the recorded PaymentInfo bytes and the Authorization time',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const crashBench = await createBench(BENCH);
    t.after(() => crashBench.close());
    const { rig, proxy } = crashBench;
    const session = await openSession(rig);
    await buy(rig, 31, 0.29);
    // Kill once the daemon's own ledger holds the sale (read from outside, read-only) and before the session ends.
    const ledgerPath = join(rig.dir, 'ledger.sqlite');
    await until(
      () => readAgentTransactions(ledgerPath).find((t) => t.txId === session.txId)?.recordedSoldMinor === 29,
      5000,
      'the vend success in the ledger',
    );
    await rig.stopAgent('SIGKILL');
    const auth = proxy.of('Authorization', session.txId)[0]!;
    await pastSecondOf(auth); // the restarted daemon's clock is past the Authorization's second
    await rig.startAgent(20_000);
    await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement recovery sent', 20_000);

    const settle = proxy.of('Settlement', session.txId)[0]!.requestText;
    assert.equal(
      member(settle, 'PaymentInfo'),
      member(auth.responseText, 'PaymentInfo'),
      'recovered from the ledger byte for byte',
    );
    assert.equal(member(settle, 'BasicInfo', 'MachineAuTime'), member(auth.requestText, 'BasicInfo', 'MachineAuTime'));
    assert.equal(member(settle, 'BasicInfo', 'AgeLimitation'), '18');
    assert.equal(member(settle, 'BasicInfo', 'Amount'), '0.29');
    assertLedgerClean(rig);
  },
);
