/** gpio.backend, the chardev line settings, the reset pulse bounds, and gpio.mode read as its old name. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/load.js';
import { isQrvendError } from '../../src/core/errors.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const gpioOf = (gpio: object) => loadConfig({ env: {}, overrides: { gpio } as never }).config.gpio;
const refusal = (gpio: object): string => {
  try {
    gpioOf(gpio);
  } catch (err) {
    assert.ok(isQrvendError(err));
    return err.message;
  }
  assert.fail('accepted');
};

test('defaults: backend auto, nothing wired, a 100 ms pulse, 30 s hold-off', T, () => {
  const g = gpioOf({});
  assert.equal(g.backend, 'auto');
  assert.deepEqual([g.chip, g.statusLedLine, g.boardResetLine, g.backlightLine], [null, null, null, null]);
  assert.deepEqual([g.resetPulseMs, g.resetHoldOffS], [100, 30]);
});

test('gpio.mode, the older name, still loads: pi is rpio, off is off; it may not contradict gpio.backend', T, () => {
  assert.equal(gpioOf({ mode: 'pi' }).backend, 'rpio');
  assert.equal(gpioOf({ mode: 'off' }).backend, 'off');
  assert.equal(gpioOf({ mode: 'auto', backend: 'chardev' }).backend, 'chardev');
  assert.equal('mode' in gpioOf({ mode: 'mock' }), false, 'only gpio.backend is read further on');
  const both = refusal({ mode: 'pi', backend: 'chardev' });
  assert.match(both, /gpio\.mode.*disagrees with gpio\.backend "chardev": remove gpio\.mode/);
});

test('chip and lines: a path or label, a name or an offset; anything else is refused naming the key', T, () => {
  const g = gpioOf({ backend: 'chardev', chip: '/dev/gpiochip4', statusLedLine: 'GPIO17', boardResetLine: 27 });
  assert.deepEqual([g.chip, g.statusLedLine, g.boardResetLine], ['/dev/gpiochip4', 'GPIO17', 27]);
  assert.equal(gpioOf({ chip: 'pinctrl-rp1' }).chip, 'pinctrl-rp1');
  assert.match(refusal({ chip: '/dev/../etc/passwd' }), /gpio\.chip/);
  assert.match(refusal({ statusLedLine: 'GPIO 17; rm' }), /gpio\.statusLedLine/);
  assert.match(refusal({ boardResetLine: 5000 }), /gpio\.boardResetLine/);
  assert.match(refusal({ backend: 'sysfs' }), /gpio\.backend/);
});

test('the reset pulse and hold-off are bounded', T, () => {
  assert.match(refusal({ resetPulseMs: 5 }), /gpio\.resetPulseMs/);
  assert.match(refusal({ resetPulseMs: 60_000 }), /gpio\.resetPulseMs/);
  assert.match(refusal({ resetHoldOffS: 1 }), /gpio\.resetHoldOffS/);
});
