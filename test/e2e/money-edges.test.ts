/**
 * End to end, the rules of docs/decisions/money-conformance.md that a configuration or a wallet can trip:
 * - staticQr.verifyAge false: the Authorization carries no AgeLimitation and an 18+ item is
 *   denied inside the static session, the display saying why; other items sell;
 * - a Start with Balance 1e21 is declined saying the Balance is too large;
 * - gateway.baseUrl with http:// to a host that is not loopback: `qrvend run` exits 78 naming the key.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  assertLedgerClean,
  assertSalesBalance,
  createInProcessBench,
  logMark,
  vmcIdle,
  waitLogAfter,
  waitTx,
  type Bench,
} from './support/e2e-rig.js';
import type { InProcessRig } from '../../rigs/in-process-rig.js';
import { buy, openSession, select } from './support/static-session.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
let bench: Bench<InProcessRig>;
const T = { timeout: TEST_DEADLINE_MS };

before(async () => {
  bench = await createInProcessBench({
    vmc: { vendPolicy: 'manual' },
    config: {
      staticQr: { verifyAge: false },
      catalog: { '30': { name: 'Beer', ageLimit: 18 }, '12': { name: 'Water' } },
    },
  });
});
after(async () => bench?.close());

test(
  'verifyAge false: no AgeLimitation in the Authorization; the ' +
    '18+ item is denied locally with the reason on the display',
  T,
  async () => {
    const { rig, proxy } = bench;
    const session = await openSession(rig);
    const auth = proxy.of('Authorization', session.txId)[0]!.request!;
    assert.equal(auth.BasicInfo.AgeLimitation, undefined, 'the approval vouches for no age');

    const mark = logMark(rig);
    assert.deepEqual(await select(rig, 30, 2), { kind: 'vend-deny' });
    const denied = await waitLogAfter(
      rig,
      mark,
      (l) => l.msg === 'vend denied in session' && l.item === 30,
      'the denial',
    );
    assert.match(String(denied.reason), /age-restricted item \(18\+\)/);
    assert.deepEqual(
      denied.screen,
      { kind: 'declined', reason: 'age-restricted', code: null },
      'what the display shows',
    );

    await buy(rig, 12, 1.5); // the session goes on for other items
    assert.ok(rig.vmc.endSession());
    const t = await waitTx(rig, session.txId, (x) => x.state === 'settled', 'the Settlement');
    assert.equal(t.settlement?.products, 1);
    assert.equal(proxy.of('Settlement', session.txId)[0]!.request!.BasicInfo.AgeLimitation, undefined);
    assertLedgerClean(rig);
    assertSalesBalance(rig);
    await vmcIdle(rig);
  },
);

test('Start with Balance 1e21: declined, saying the Balance is too large (not a decimals problem)', T, async () => {
  const { rig } = bench;
  const start = await rig.start({ balance: 1e21 });
  assert.equal(start.outcome.kind, 'declined', JSON.stringify(start.outcome));
  if (start.outcome.kind !== 'declined') return;
  assert.equal(start.outcome.code, 998);
  assert.match(start.outcome.message ?? '', /Balance.*too large/);
  assert.doesNotMatch(start.outcome.message ?? '', /decimal/);
  assert.equal(rig.gateway.ledger().transactions[start.transactionId], undefined, 'no Authorization went out');
});

test(
  'gateway.baseUrl http:// to a non-loopback host: qrvend run ' +
    'exits 78 naming the key; https:// and loopback http:// pass',
  T,
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-https-'));
    try {
      const file = join(dir, 'config.json');
      const check = (baseUrl: string, command: string[]) => {
        writeFileSync(file, JSON.stringify({ gateway: { baseUrl } }));
        return spawnSync(
          process.execPath,
          [MAIN, ...command, ...(command[0] === 'run' ? ['--config', file] : [file])],
          { encoding: 'utf8', timeout: TEST_DEADLINE_MS, env: { ...process.env, QRVEND_CONFIG: '' } },
        );
      };
      const run = check('http://gw.example.com:8090', ['run']);
      assert.equal(run.status, 78, run.stderr);
      assert.match(run.stderr, /gateway\.baseUrl: must be https:\/\//);
      assert.equal(check('http://10.0.0.5:8090', ['config', 'check']).status, 78, 'a private address is not loopback');
      for (const ok of [
        'https://gw.example.com:8443',
        'http://127.0.0.1:8090',
        'http://[::1]:8090',
        'http://localhost:8090',
      ]) {
        const r = check(ok, ['config', 'check']);
        assert.equal(r.status, 0, `${ok}: ${r.stderr}`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
