/**
 * The chardev backend against the kernel's own GPIO chip, where the test machine has one (a Pi, the
 * field test's QEMU virt machine): a free line is taken as the LED, the kernel's line info is read
 * back, and the line is given back at close. Skipped, saying so, where there is no usable chip.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { accessSync, constants } from 'node:fs';
import { openGpio, type GpioConfig } from '../../../src/device/gpio.js';
import { silentLogger } from '../../../src/core/log.js';
import { listChips, loadGpioAddon, type GpioAddon } from '../../../src/device/gpio/chardev.js';

/** The first readable chip with a free, unnamed-or-named line: [chip, offset], or why there is none. */
function freeLine(addon: GpioAddon | Error): [string, number] | string {
  if (addon instanceof Error) return `qrvend-gpio.node not loadable: ${addon.message}`;
  const chips = listChips();
  if (chips.length === 0) return 'this machine has no /dev/gpiochip*';
  for (const chip of chips) {
    try {
      accessSync(chip, constants.R_OK | constants.W_OK);
      const free = addon.lineInfos(chip).find((l) => !l.used);
      if (free) return [chip, free.offset];
    } catch {
      // not ours to use; try the next chip
    }
  }
  return `no chip among ${chips.join(', ')} is readable and writable with a free line`;
}

const addon = loadGpioAddon();
const found = freeLine(addon);
const skip = typeof found === 'string' ? `no kernel GPIO chip to test against: ${found}` : false;

describe('GPIO chardev backend on the kernel', () => {
  it('holds a free line as output with consumer "qrvend", drives it, and gives it back at close', { skip }, () => {
    const [chip, offset] = found as [string, number];
    const kernel = addon as GpioAddon;
    const config: GpioConfig = {
      backend: 'chardev',
      statusLedPin: null,
      boardResetPin: null,
      backlightPin: null,
      chip,
      statusLedLine: offset,
      boardResetLine: null,
      backlightLine: null,
      resetPulseMs: 100,
      resetHoldOffS: 30,
    };
    const gpio = openGpio(config, silentLogger());
    try {
      assert.equal(gpio.mode, 'chardev');
      const info = kernel.lineInfos(chip)[offset]!;
      assert.deepEqual([info.used, info.consumer, info.output], [true, 'qrvend', true]);
      gpio.statusLed.set('ready');
      assert.equal(gpio.stats().values?.led, 1, 'the kernel reads the LED line back high');
      gpio.statusLed.set('off');
      assert.equal(gpio.stats().values?.led, 0);
    } finally {
      gpio.close();
    }
    assert.equal(kernel.lineInfos(chip)[offset]!.used, false, 'released at close');
  });
});
