/**
 * End to end, Static QR in currencies without cents and with three decimals
 * (docs/decisions/tests-that-catch.md item 3): the real daemon wiring in this process on the
 * in-memory wire (rigs/in-process-rig.ts), the VMC and the gateway simulator set to the same
 * currency, the exact bytes the gateway received. The prices are ones binary floating point holds just below
 * their decimal value (1.005 * 1000 = 1004.9999999999999): a Settlement that truncates instead of
 * rounding is a minor unit short.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memberText } from '../../src/gateway/wire/index.js';
import { assertLedgerClean, assertSalesBalance, createInProcessBench, vmcIdle, waitTx } from './support/e2e-rig.js';
import { buy, openSession } from './support/static-session.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const cases = [
  {
    // Without decimals an amount is still written as a double (gateway interface: "such as 234.0").
    machine: { decimalPlaces: 0, currencyCode: 'JPY', currencyNumeric: '392' },
    preauth: { amount: 1000, text: '1000.0' },
    sold: [
      { item: 3, price: 130, text: '130.0' },
      { item: 4, price: 150, text: '150.0' },
    ],
    settled: { amount: 280, text: '280.0' },
  },
  {
    machine: { decimalPlaces: 3, currencyCode: 'KWD', currencyNumeric: '414' },
    preauth: { amount: 10, text: '10.000' },
    sold: [
      { item: 3, price: 0.295, text: '0.295' },
      { item: 4, price: 1.005, text: '1.005' },
      { item: 5, price: 4.35, text: '4.350' },
    ],
    settled: { amount: 5.65, text: '5.650' },
  },
];

function member(text: string | null, ...path: string[]): string | null {
  let cur: string | null = text;
  for (const name of path) cur = cur === null ? null : memberText(cur, name);
  return cur;
}

for (const c of cases) {
  const { decimalPlaces, currencyCode } = c.machine;
  test(
    `${currencyCode} (${decimalPlaces} decimals): the session's funds, the Settlement of ` +
      `${c.sold.map((s) => s.text).join(' + ')} and every amount written as the currency has it`,
    { timeout: TEST_DEADLINE_MS },
    async () => {
      const bench = await createInProcessBench({
        vmc: { vendPolicy: 'manual', decimalPlaces },
        config: { machine: c.machine, staticQr: { preauthAmount: c.preauth.amount } },
      });
      try {
        const { rig, proxy } = bench;
        const session = await openSession(rig);
        assert.equal(session.funds, c.preauth.amount, 'C,START carries the pre-auth in the currency');
        const auth = proxy.of('Authorization', session.txId)[0]!.requestText;
        assert.equal(member(auth, 'BasicInfo', 'Amount'), c.preauth.text);
        for (const s of c.sold) await buy(rig, s.item, s.price);
        assert.ok(rig.vmc.endSession());
        const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
        assert.equal(t.settlement?.amount, c.settled.amount);

        const settle = proxy.of('Settlement', session.txId)[0]!.requestText;
        assert.equal(member(settle, 'BasicInfo', 'Amount'), c.settled.text);
        assert.equal(member(settle, 'BasicInfo', 'CurrencyCode'), JSON.stringify(currencyCode));
        assert.equal(member(settle, 'MachineInfo', 'DecimalPlace'), String(decimalPlaces));
        const codes = JSON.parse(member(settle, 'Products')!).map((p: { Code: number }) => p.Code);
        assert.deepEqual(
          codes,
          c.sold.map((s) => s.item),
        );
        for (const s of c.sold)
          assert.match(
            settle,
            new RegExp(`\\{"Code":${s.item},"Price":${s.text.replace('.', '\\.')},`),
            `item ${s.item} at ${s.text}`,
          );
        assertLedgerClean(rig);
        assertSalesBalance(rig);
        await vmcIdle(rig);
      } finally {
        await bench.close();
      }
    },
  );
}
