import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseBackend, openGpio, type GpioConfig, type GpioTimers } from '../../../src/device/gpio.js';
import { createLogger, silentLogger } from '../../../src/core/log.js';
import { findLine, LineMode } from '../../../src/device/gpio/chardev.js';
import { MockGpioAddon } from './mock-addon.js';

const FIXTURES = fileURLToPath(new URL('../../../../test/fixtures/device/', import.meta.url));
const PI5 = join(FIXTURES, 'pi5-chardev');
const CHIP0 = join(PI5, 'dev/gpiochip0');
const RP1 = join(PI5, 'dev/gpiochip4');

function logCapture() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: 'info', destination }), lines };
}

/** Timers the test drives by hand (the pulse's end). */
class HandTimers implements GpioTimers {
  readonly due: Array<() => void> = [];
  setInterval = () => 0;
  clearInterval = () => {};
  setTimeout(fn: () => void) {
    this.due.push(fn);
    return 0;
  }
  fire() {
    for (const fn of this.due.splice(0)) fn();
  }
}

/** The Pi 5's chips as the kernel names them: gpiochip0 (brcmstb, few lines), gpiochip4 the RP1 header. */
function pi5Addon() {
  return new MockGpioAddon()
    .addChip(CHIP0, 'gpio-brcmstb@107d508500', [{ name: 'RP1_SDA' }, { name: 'RP1_SCL' }])
    .addChip(RP1, 'pinctrl-rp1', [
      { name: 'ID_SDA' }, // 0
      { name: 'ID_SCL' }, // 1
      { name: 'GPIO2' }, // 2
      { name: 'GPIO3', consumer: 'i2c-bus' }, // 3: held by a kernel driver
      { name: 'GPIO17' }, // 4 (names, not offsets, are what a technician reads off the pinout)
      { name: 'GPIO27' }, // 5
    ])
    .addChip(join(PI5, 'dev/gpiochip10'), 'rp1-unused', []);
}

const config = (over: Partial<GpioConfig> = {}): GpioConfig => ({
  backend: 'auto',
  statusLedPin: null,
  boardResetPin: null,
  backlightPin: null,
  chip: 'pinctrl-rp1',
  statusLedLine: 'GPIO17',
  boardResetLine: 5,
  backlightLine: null,
  resetPulseMs: 100,
  resetHoldOffS: 30,
  ...over,
});

describe('GPIO chardev backend (mock addon)', () => {
  it('auto on a Pi 5 takes the character device; lines by chip label + name or offset, held as "qrvend"', async () => {
    const addon = pi5Addon();
    const timers = new HandTimers();
    const gpio = openGpio(config(), silentLogger(), { root: PI5, chardev: addon, timers });
    assert.equal(gpio.mode, 'chardev');
    assert.equal(gpio.chip, RP1);
    assert.deepEqual(addon.calls, [
      `request ${RP1} 4 qrvend mode=${LineMode.output} value=0`, // LED: output, dark
      `request ${RP1} 5 qrvend mode=${LineMode.openDrain} value=1`, // reset: open drain, released
    ]);
    assert.equal(addon.line(RP1, 4).consumer, 'qrvend');

    addon.calls.length = 0;
    gpio.statusLed.set('ready');
    assert.equal(addon.line(RP1, 4).value, 1, 'ready = steady on');
    const pulse = gpio.boardReset.pulse();
    assert.equal(addon.line(RP1, 5).value, 0, 'reset asserted low');
    timers.fire();
    await pulse;
    assert.equal(addon.line(RP1, 5).value, 1, 'reset released');
    assert.equal(gpio.boardReset.pulses, 1);
    assert.deepEqual(gpio.stats(), {
      backend: 'chardev',
      chip: RP1,
      led: 'ready',
      boardResets: 1,
      values: { led: 1, reset: 1, backlight: null }, // read back through the held lines
    });

    gpio.close();
    assert.equal(addon.line(RP1, 4).value, 0, 'LED dark at stop');
    assert.equal(addon.line(RP1, 4).consumer, '', 'lines given back at stop');
    assert.equal(addon.line(RP1, 5).consumer, '');
  });

  it('a line held by another consumer is logged naming it, and left unwired; the other lines work', () => {
    const addon = pi5Addon();
    const { log, lines } = logCapture();
    const options = { root: PI5, chardev: addon, timers: new HandTimers() };
    const gpio = openGpio(config({ boardResetLine: 'GPIO3' }), log, options);
    assert.equal(gpio.mode, 'chardev');
    assert.equal(gpio.boardReset.wired, false);
    const err = lines.find((l) => l.level === 'error');
    const busy = /gpio\.boardResetLine .*gpiochip4 line 3 \(GPIO3\): held by another consumer "i2c-bus"/;
    assert.match(String(err?.msg), busy);
    gpio.statusLed.set('ready');
    assert.equal(addon.line(RP1, 4).value, 1);
    gpio.close();
  });

  it('a line name no chip has is logged with how to find names; no line at all leaves GPIO off', () => {
    const { log, lines } = logCapture();
    const gpio = openGpio(config({ chip: null, statusLedLine: 'GPIO99', boardResetLine: null }), log, {
      root: PI5,
      chardev: pi5Addon(),
    });
    assert.equal(gpio.mode, 'off');
    const error = String(lines.find((l) => l.level === 'error')?.msg);
    assert.match(error, /no line named "GPIO99" on any chip \(gpioinfo lists the names\)/);
  });

  it('the addon not loading leaves GPIO off with a technician message, and pulse() still resolves', async () => {
    const { log, lines } = logCapture();
    const gpio = openGpio(config(), log, { root: PI5, chardev: new Error('wrong ELF class') });
    assert.equal(gpio.mode, 'off');
    await gpio.boardReset.pulse();
    assert.match(String(lines.find((l) => l.level === 'error')?.msg), /qrvend-gpio\.node cannot be loaded/);
  });

  it('findLine: a name is searched on every chip; an offset without a chip is on the first chip', () => {
    const addon = pi5Addon();
    const devDir = join(PI5, 'dev');
    const byName = findLine(addon, null, 'GPIO27', devDir);
    assert.ok(typeof byName !== 'string');
    assert.deepEqual([byName.chipPath, byName.info.offset], [RP1, 5]);
    const byOffset = findLine(addon, null, 1, devDir);
    assert.ok(typeof byOffset !== 'string');
    assert.deepEqual([byOffset.chipPath, byOffset.info.name], [CHIP0, 'RP1_SCL']);
    assert.match(String(findLine(addon, 'pinctrl-rp1', 9, devDir)), /has 6 lines, no offset 9/);
    assert.match(String(findLine(addon, 'no-such-chip', 1, devDir)), /no GPIO chip "no-such-chip"/);
  });
});

describe('GPIO backend choice', () => {
  const lines = config();
  const pins = config({ chip: null, statusLedLine: null, boardResetLine: null, statusLedPin: 11 });
  it('auto: rpio on a Pi 4, chardev on a Pi 5 and on QEMU virt, mock where there is no chip', () => {
    assert.equal(chooseBackend(pins, join(FIXTURES, 'pi4-devicetree')).backend, 'rpio');
    assert.equal(chooseBackend(lines, PI5).backend, 'chardev');
    const why = chooseBackend(lines, PI5).why;
    assert.match(why, /rpio does not support its RP1 GPIO, and it has a GPIO character device/);
    assert.equal(chooseBackend(lines, join(FIXTURES, 'qemu-virt')).backend, 'chardev');
    assert.equal(chooseBackend(lines, join(FIXTURES, 'x86-machine-id')).backend, 'mock');
  });

  it('rpio asked for on a Pi 5 is off with a reason naming chardev; an explicit backend is taken as given', () => {
    const r = chooseBackend(config({ backend: 'rpio' }), PI5);
    assert.equal(r.backend, 'off');
    assert.match(r.why, /use chardev/);
    assert.equal(chooseBackend(config({ backend: 'chardev' }), join(FIXTURES, 'pi4-devicetree')).backend, 'chardev');
  });
});
