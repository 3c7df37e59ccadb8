/**
 * The flows' money arithmetic (src/flows/amounts.ts) at prices that do not multiply exactly by
 * 100 (0.29 * 100 = 28.999999999999996), in currencies with 0, 2 and 3 decimal places: a sum
 * truncated instead of rounded, or a cap that lets an amount exceed the balance, fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authorizationAmount, floorAmount, totalOf } from '../../src/flows/amounts.js';

const items = (...prices: number[]) => prices.map((price, i) => ({ item: i + 1, price }));

test('totalOf sums in minor units: 0.29 + 1.15 + 4.35 is 5.79, not 5.77', () => {
  assert.equal(totalOf(items(0.29, 1.15, 4.35), 2), 5.79);
  assert.equal(totalOf(items(0.29), 2), 0.29);
  assert.equal(totalOf(items(0.1, 0.2), 2), 0.3);
  assert.equal(totalOf([], 2), 0);
});

test('totalOf in currencies with 0 and 3 decimal places', () => {
  assert.equal(totalOf(items(120, 35), 0), 155);
  assert.equal(totalOf(items(0.125, 1.001, 4.349), 3), 5.475);
  // A price with more places than the currency has is rounded to the nearest minor unit.
  assert.equal(totalOf(items(1.006), 2), 1.01);
  assert.equal(totalOf(items(1.004), 2), 1);
});

test('floorAmount rounds down to the currency, but keeps an exact 0.29 at 0.29', () => {
  assert.equal(floorAmount(0.29, 2), 0.29);
  assert.equal(floorAmount(4.35, 2), 4.35);
  assert.equal(floorAmount(1.239, 2), 1.23);
  assert.equal(floorAmount(7.9, 0), 7);
  assert.equal(floorAmount(2.0009, 3), 2);
});

test('authorizationAmount: the pre-auth, capped by the balance, never above it', () => {
  assert.equal(authorizationAmount(5, null, 2), 5);
  assert.equal(authorizationAmount(5, undefined, 2), 5);
  assert.equal(authorizationAmount(5, 0.29, 2), 0.29);
  assert.equal(authorizationAmount(5, 1.239, 2), 1.23);
  assert.equal(authorizationAmount(0.29, 7, 2), 0.29);
  assert.equal(authorizationAmount(5, 0, 2), 0);
  assert.equal(authorizationAmount(500, 120.5, 0), 120);
});
