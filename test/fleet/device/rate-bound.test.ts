/** Separate budgets per kind of command (issue 31 item 5). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMAND_BUDGETS, CommandBudgets } from '../../../src/fleet/device/rate-bound.js';

test('a flood on one budget takes nothing from another', { timeout: 5_000 }, () => {
  const budgets = new CommandBudgets(0);
  let starts = 0;
  for (let i = 0; i < 1000; i++) if (budgets.take('start', i)) starts += 1; // 1000 Starts in one second
  assert.ok(starts <= COMMAND_BUDGETS.start.burst + COMMAND_BUDGETS.start.perSecond, `${starts} Starts taken`);
  let refusals = 0;
  for (let i = 0; i < 1000; i++) if (budgets.take('refusals', i)) refusals += 1;
  assert.ok(refusals <= COMMAND_BUDGETS.refusals.burst + COMMAND_BUDGETS.refusals.perSecond);
  // The operator's budget is whole: its full burst is there.
  for (let i = 0; i < COMMAND_BUDGETS.operator.burst; i++) assert.equal(budgets.take('operator', 1000), true, `operator command ${i}`);
  assert.equal(budgets.take('operator', 1000), false);
  assert.equal(budgets.dropped().operator, 1);
  assert.equal(budgets.dropped().start, 1000 - starts);
  assert.equal(budgets.totalDropped, 1000 - starts + 1000 - refusals + 1);
  assert.equal(budgets.take('operator', 1000 + 1000 / COMMAND_BUDGETS.operator.perSecond), true, 'refilled');
});
