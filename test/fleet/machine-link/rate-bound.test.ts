/** Separate budgets per kind of command (docs/decisions/fleet-trust.md item 5). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMAND_BUDGETS, CommandBudgets } from '../../../src/fleet/machine-link/rate-bound.js';
import { VERIFY_RESERVE } from '../../../src/fleet/machine-link/key-budgets.js';

test('a flood on one budget takes nothing from another', { timeout: 5_000 }, () => {
  const budgets = new CommandBudgets(0);
  let starts = 0;
  for (let i = 0; i < 1000; i++) if (budgets.take('start', i)) starts += 1; // 1000 Starts in one second
  assert.ok(starts <= COMMAND_BUDGETS.start.burst + COMMAND_BUDGETS.start.perSecond, `${starts} Starts taken`);
  let refusals = 0;
  for (let i = 0; i < 1000; i++) if (budgets.take('refusals', i)) refusals += 1;
  assert.ok(refusals <= COMMAND_BUDGETS.refusals.burst + COMMAND_BUDGETS.refusals.perSecond);
  // The unsigned reads' budget is whole: its full burst is there.
  for (let i = 0; i < COMMAND_BUDGETS.unsigned.burst; i++)
    assert.equal(budgets.take('unsigned', 1000), true, `unsigned read ${i}`);
  assert.equal(budgets.take('unsigned', 1000), false);
  assert.equal(budgets.dropped().unsigned, 1);
  assert.equal(budgets.dropped().start, 1000 - starts);
  assert.equal(budgets.totalDropped, 1000 - starts + 1000 - refusals + 1);
  assert.equal(budgets.take('unsigned', 1000 + 1000 / COMMAND_BUDGETS.unsigned.perSecond), true, 'refilled');
});

test('a take that keeps a reserve stops short of it; a take without one spends the reserve', { timeout: 5_000 }, () => {
  const budgets = new CommandBudgets(0);
  let reads = 0;
  while (budgets.take('verify', 0, VERIFY_RESERVE)) reads += 1;
  assert.equal(reads, COMMAND_BUDGETS.verify.burst - VERIFY_RESERVE);
  for (let i = 0; i < VERIFY_RESERVE; i++) assert.equal(budgets.take('verify', 0), true, `reserved check ${i}`);
  assert.equal(budgets.take('verify', 0), false);
});
