import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  openGpio,
  statusLedStateFor,
  type GpioConfig,
  type GpioTimers,
  type RpioDriver,
} from '../../src/device/gpio.js';
import { silentLogger } from '../../src/core/log.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/device/', import.meta.url));
const rpio = createRequire(import.meta.url)('rpio') as RpioDriver & { read(pin: number): number };

const LED = 11; // physical pin 11 = GPIO17
const RESET = 13; // physical pin 13 = GPIO27
const BACKLIGHT = 12; // physical pin 12 = GPIO18

/**
 * rpio in its mock mode, wrapped so the test sees every call. A request for real hardware
 * (mock: false) is turned into mock mode here: the test must never touch the host's GPIO.
 */
function recordingRpio() {
  const calls: string[] = [];
  const name = (mode: number) => (mode === rpio.OUTPUT ? 'OUTPUT' : 'INPUT');
  const driver: RpioDriver = {
    INPUT: rpio.INPUT,
    OUTPUT: rpio.OUTPUT,
    LOW: rpio.LOW,
    HIGH: rpio.HIGH,
    PULL_UP: rpio.PULL_UP,
    init(options) {
      calls.push(`init mock=${options.mock} mapping=${options.mapping}`);
      rpio.init({ ...options, mock: options.mock || 'raspi-4' });
    },
    open(pin, mode, option) {
      calls.push(`open ${pin} ${name(mode)} ${option}`);
      rpio.open(pin, mode, option);
    },
    mode(pin, mode, option) {
      calls.push(`mode ${pin} ${name(mode)} ${option}`);
      rpio.mode(pin, mode, option);
    },
    write(pin, value) {
      calls.push(`write ${pin} ${value}`);
      rpio.write(pin, value);
    },
    close(pin) {
      calls.push(`close ${pin}`);
      rpio.close(pin);
    },
  };
  return { driver, calls };
}

/** Timers driven by the test: advance(ms) runs what falls due, in order. */
class FakeTimers implements GpioTimers {
  now = 0;
  private next = 1;
  readonly pending = new Map<number, { at: number; fn: () => void; every: number | null }>();
  setInterval(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { at: this.now + ms, fn, every: ms });
    return id;
  }
  clearInterval(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { at: this.now + ms, fn, every: null });
    return id;
  }
  get intervals(): number {
    return [...this.pending.values()].filter((t) => t.every !== null).length;
  }
  advance(ms: number): void {
    const end = this.now + ms;
    for (;;) {
      const due = [...this.pending.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      const [id, t] = due;
      this.now = t.at;
      if (t.every === null) this.pending.delete(id);
      else t.at += t.every;
      t.fn();
    }
    this.now = end;
  }
}

const config = (over: Partial<GpioConfig> = {}): GpioConfig => ({
  backend: 'mock',
  statusLedPin: LED,
  boardResetPin: RESET,
  backlightPin: BACKLIGHT,
  chip: null,
  statusLedLine: null,
  boardResetLine: null,
  backlightLine: null,
  resetPulseMs: 100,
  resetHoldOffS: 30,
  ...over,
});

describe('GPIO in rpio mock mode', () => {
  it('opens the wired pins: LED off, reset released (input, pull-up), backlight on', () => {
    const { driver, calls } = recordingRpio();
    const gpio = openGpio(config(), silentLogger(), { rpio: driver, timers: new FakeTimers() });
    assert.equal(gpio.mode, 'mock');
    assert.deepEqual(calls, [
      'init mock=raspi-3 mapping=physical',
      `open ${LED} OUTPUT ${rpio.LOW}`,
      `open ${RESET} INPUT ${rpio.PULL_UP}`,
      `open ${BACKLIGHT} OUTPUT ${rpio.HIGH}`,
    ]);
    assert.equal(rpio.read(BACKLIGHT), 1);
    gpio.close();
  });

  it('status LED: ready = on, offline = slow blink, fault = fast blink, off = dark; one timer at most', () => {
    const { driver, calls } = recordingRpio();
    const timers = new FakeTimers();
    const gpio = openGpio(config(), silentLogger(), { rpio: driver, timers });
    const ledWrites = () => calls.filter((c) => c.startsWith(`write ${LED} `)).map((c) => Number(c.split(' ')[2]));

    gpio.statusLed.set('ready');
    assert.equal(rpio.read(LED), 1);
    assert.equal(timers.intervals, 0, 'a steady LED needs no timer');
    timers.advance(5000);
    assert.deepEqual(ledWrites(), [1]);

    calls.length = 0;
    gpio.statusLed.set('offline');
    timers.advance(2000); // 500 ms half period: 4 toggles
    assert.deepEqual(ledWrites(), [1, 0, 1, 0, 1]);
    assert.equal(timers.intervals, 1);

    calls.length = 0;
    gpio.statusLed.set('fault');
    timers.advance(400); // 100 ms half period
    assert.deepEqual(ledWrites(), [1, 0, 1, 0, 1]);
    assert.equal(timers.intervals, 1, 'the slow blink timer was replaced, not added to');

    calls.length = 0;
    gpio.statusLed.set('fault');
    assert.deepEqual(ledWrites(), [], 'setting the same state again changes nothing');

    gpio.statusLed.set('off');
    timers.advance(1000);
    assert.deepEqual(ledWrites(), [0]);
    assert.equal(rpio.read(LED), 0);
    assert.equal(timers.intervals, 0);
    assert.equal(gpio.statusLed.state, 'off');
    gpio.close();
  });

  it('board reset: drives the line low for 100 ms, then releases it; overlapping pulses are one', async () => {
    const { driver, calls } = recordingRpio();
    const timers = new FakeTimers();
    const gpio = openGpio(config(), silentLogger(), { rpio: driver, timers, now: () => timers.now });
    calls.length = 0;
    let done = false;
    const first = gpio.boardReset.pulse().then(() => (done = true));
    const second = gpio.boardReset.pulse();
    assert.deepEqual(calls, [`mode ${RESET} OUTPUT ${rpio.LOW}`]);
    assert.equal(rpio.read(RESET), 0);
    timers.advance(99);
    await Promise.resolve();
    assert.equal(done, false, 'still in the pulse at 99 ms');
    timers.advance(1);
    await Promise.all([first, second]);
    assert.deepEqual(calls, [`mode ${RESET} OUTPUT ${rpio.LOW}`, `mode ${RESET} INPUT ${rpio.PULL_UP}`]);
    // A later pulse, once the hold-off is over, is a new pulse.
    timers.advance(30_000);
    const third = gpio.boardReset.pulse();
    timers.advance(100);
    await third;
    assert.equal(calls.filter((c) => c.includes('OUTPUT')).length, 2);
    assert.equal(gpio.boardReset.pulses, 2);
    gpio.close();
  });

  it('board reset: gpio.resetPulseMs sets the pulse; within gpio.resetHoldOffS a pulse is skipped', async () => {
    const { driver, calls } = recordingRpio();
    const timers = new FakeTimers();
    const options = { rpio: driver, timers, now: () => timers.now };
    const gpio = openGpio(config({ resetPulseMs: 250, resetHoldOffS: 60 }), silentLogger(), options);
    assert.equal(gpio.boardReset.wired, true);
    calls.length = 0;
    const first = gpio.boardReset.pulse();
    timers.advance(249);
    assert.equal(rpio.read(RESET), 0, 'still held low at 249 ms');
    timers.advance(1);
    await first;
    assert.equal(gpio.boardReset.pulses, 1);
    timers.advance(59_000); // 59.25 s after the first pulse began: inside the hold-off
    await gpio.boardReset.pulse();
    assert.equal(gpio.boardReset.pulses, 1, 'skipped inside the hold-off');
    assert.equal(calls.filter((c) => c.includes('OUTPUT')).length, 1);
    timers.advance(1_000);
    const again = gpio.boardReset.pulse();
    timers.advance(250);
    await again;
    assert.equal(gpio.boardReset.pulses, 2);
    gpio.close();
  });

  it('backlight follows set()', () => {
    const { driver } = recordingRpio();
    const gpio = openGpio(config(), silentLogger(), { rpio: driver, timers: new FakeTimers() });
    gpio.backlight.set(false);
    assert.equal(rpio.read(BACKLIGHT), 0);
    gpio.backlight.set(true);
    assert.equal(rpio.read(BACKLIGHT), 1);
    gpio.close();
  });

  it('close() stops the blinking, darkens the LED, resets every pin and ignores later calls', async () => {
    const { driver, calls } = recordingRpio();
    const timers = new FakeTimers();
    const gpio = openGpio(config(), silentLogger(), { rpio: driver, timers });
    gpio.statusLed.set('fault');
    gpio.close();
    assert.equal(timers.intervals, 0);
    assert.deepEqual(calls.slice(-4), [`write ${LED} 0`, `close ${LED}`, `close ${RESET}`, `close ${BACKLIGHT}`]);
    calls.length = 0;
    gpio.statusLed.set('ready');
    gpio.backlight.set(true);
    await gpio.boardReset.pulse();
    assert.deepEqual(calls, []);
  });

  it('a pin that is not a GPIO (pin 1 is 3.3 V) is left unwired; the others still work', () => {
    const { driver } = recordingRpio();
    const gpio = openGpio(config({ statusLedPin: 1 }), silentLogger(), { rpio: driver, timers: new FakeTimers() });
    gpio.statusLed.set('ready'); // no pin: nothing happens, nothing throws
    gpio.backlight.set(false);
    assert.equal(rpio.read(BACKLIGHT), 0);
    gpio.close();
  });
});

describe('GPIO backend selection', () => {
  const open = (over: Partial<GpioConfig>, fixture: string) => {
    const rec = recordingRpio();
    const gpio = openGpio(config(over), silentLogger(), {
      rpio: rec.driver,
      timers: new FakeTimers(),
      root: join(FIXTURES, fixture),
    });
    gpio.close();
    return { mode: gpio.mode, calls: rec.calls };
  };

  it('auto: real GPIO on a Raspberry Pi 4', () => {
    const r = open({ backend: 'auto' }, 'pi4-devicetree');
    assert.equal(r.mode, 'rpio');
    assert.equal(r.calls[0], 'init mock=false mapping=physical');
  });

  it('auto: mock on a PC and on a Raspberry Pi 5 (rpio does not support it)', () => {
    assert.equal(open({ backend: 'auto' }, 'x86-machine-id').mode, 'mock');
    const pi5 = open({ backend: 'auto' }, 'pi5');
    assert.equal(pi5.mode, 'mock');
    assert.equal(pi5.calls[0], 'init mock=raspi-3 mapping=physical');
  });

  it('rpio on a host that is not a supported Pi: GPIO off, nothing touched', () => {
    const r = open({ backend: 'rpio' }, 'pi5');
    assert.equal(r.mode, 'off');
    assert.deepEqual(r.calls, []);
  });

  it('off, or no pin wired: rpio is never used', () => {
    assert.deepEqual(open({ backend: 'off' }, 'pi4-devicetree'), { mode: 'off', calls: [] });
    assert.deepEqual(open({ statusLedPin: null, boardResetPin: null, backlightPin: null }, 'pi4-devicetree'), {
      mode: 'off',
      calls: [],
    });
  });
});

describe('statusLedStateFor', () => {
  it('fault wins, then offline with a backlog, else ready', () => {
    assert.equal(statusLedStateFor({ fault: true, gatewayOnline: true, outboxPending: 0 }), 'fault');
    assert.equal(statusLedStateFor({ fault: false, gatewayOnline: false, outboxPending: 3 }), 'offline');
    assert.equal(statusLedStateFor({ fault: false, gatewayOnline: false, outboxPending: 0 }), 'ready');
    assert.equal(statusLedStateFor({ fault: false, gatewayOnline: true, outboxPending: 9 }), 'ready');
    const fine = { fault: false, gatewayOnline: true, outboxPending: 0 };
    assert.equal(statusLedStateFor({ ...fine, reader: 'down' }), 'fault');
    assert.equal(statusLedStateFor({ ...fine, reader: 'waiting' }), 'offline');
    assert.equal(statusLedStateFor({ ...fine, reader: 'up' }), 'ready');
  });
});
