/** Budgets and commands in progress per operator key (docs/security.md, "Budgets and nonce shares per key"). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CommandsInFlight,
  IN_FLIGHT_PER_KEY,
  IN_FLIGHT_RESERVE,
  KeyBudgets,
  MAX_COMMANDS_IN_FLIGHT,
  PER_KEY_BUDGET,
} from '../../../src/fleet/machine-link/key-budgets.js';
import { MAX_KEYS } from '../../../src/trust/keys.js';

test('each key has its own budget per scope; health counts per key id, bounded by the keys', { timeout: 5_000 }, () => {
  const keys = new KeyBudgets();
  const pinger = { id: 'pinger', fingerprint: 'fp-pinger', scope: 'read' as const, nonceShare: 1 };
  const opsRead = { id: 'ops', fingerprint: 'fp-ops', scope: 'read' as const, nonceShare: 1 };
  const opsOperate = { ...opsRead, scope: 'operate' as const };
  let pings = 0;
  for (let i = 0; i < 80; i++) if (keys.take(pinger, 0)) pings += 1;
  assert.equal(pings, PER_KEY_BUDGET.burst);
  for (let i = 0; i < PER_KEY_BUDGET.burst; i++) assert.equal(keys.take(opsRead, 0), true);
  assert.equal(keys.take(opsRead, 0), false);
  assert.equal(keys.take(opsOperate, 0), true, "ops's reads leave its operate budget whole");
  keys.refused('ops');
  assert.deepEqual(keys.byKey(), {
    pinger: { dropped: 80 - PER_KEY_BUDGET.burst, refused: 0 },
    ops: { dropped: 1, refused: 1 },
  });
  for (let i = 0; i < 2 * MAX_KEYS; i++) keys.refused(`k${i}`);
  assert.equal(Object.keys(keys.byKey()).length, MAX_KEYS);
});

test(
  'in progress: reads leave slots to operate and configure, one key leaves slots to others',
  { timeout: 5_000 },
  () => {
    const slots = new CommandsInFlight();
    const spender = (fingerprint: string, scope: 'read' | 'operate') => ({
      id: fingerprint,
      fingerprint,
      scope,
      nonceShare: 1,
    });
    let pinger = 0;
    while (slots.enter(spender('pinger', 'read'))) pinger += 1;
    assert.equal(pinger, IN_FLIGHT_PER_KEY);
    let others = 0;
    for (let i = 0; i < MAX_COMMANDS_IN_FLIGHT; i++) if (slots.enter(spender(`reader-${i}`, 'read'))) others += 1;
    assert.equal(pinger + others, MAX_COMMANDS_IN_FLIGHT - IN_FLIGHT_RESERVE, 'reads stop short of the reserve');
    assert.equal(slots.enter(null), false, 'unsigned reads too');
    const ops = spender('ops', 'operate');
    for (let i = 0; i < IN_FLIGHT_RESERVE; i++) assert.equal(slots.enter(ops), true, `operate ${i}`);
    assert.equal(slots.enter(ops), false);
    slots.leave(spender('pinger', 'read'));
    assert.equal(slots.enter(spender('pinger', 'read')), false, 'the reserve is in use; reads wait');
    slots.leave(ops);
    assert.equal(slots.enter(ops), true);
  },
);
