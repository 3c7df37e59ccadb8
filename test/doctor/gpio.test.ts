/** doctor's GPIO check over a mock of the addon: each line's direction and value, busy and missing lines named. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GpioConfig } from '../../src/device/gpio.js';
import { inspectGpio } from '../../src/doctor/checks/gpio.js';
import { MockGpioAddon } from '../device/gpio/mock-addon.js';

const VIRT = fileURLToPath(new URL('../../../test/fixtures/device/qemu-virt/', import.meta.url));
const CHIP = join(VIRT, 'dev/gpiochip0');

/** QEMU virt's PL061 as the guest kernel shows it: 8 unnamed lines, line 3 held by the power key. */
function pl061() {
  return new MockGpioAddon().addChip(CHIP, '9030000.pl061', [
    { name: '' }, // 0
    { name: '' }, // 1
    { name: '' }, // 2
    { name: '', consumer: 'GPIO Key Poweroff' }, // 3: gpio-keys holds it
    { name: '', consumer: 'qrvend', output: true, value: 1 }, // 4: the daemon's LED, lit
    { name: '', output: true, value: 0 }, // 5: free, left an output at 0
    { name: '' }, // 6
    { name: '' }, // 7
  ]);
}

const config = (over: Partial<GpioConfig> = {}): GpioConfig => ({
  backend: 'auto',
  statusLedPin: null,
  boardResetPin: null,
  backlightPin: null,
  chip: null,
  statusLedLine: 4,
  boardResetLine: 5,
  backlightLine: null,
  resetPulseMs: 100,
  resetHoldOffS: 30,
  ...over,
});

describe('doctor: GPIO lines', () => {
  it('shows the backend and why, each line with direction, value and holder, and the board resets', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-gpio-doctor-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const factsPath = join(dir, 'gpio-facts.json');
    // What the daemon writes after its second pulse (src/device/gpio/facts-file.ts).
    const facts = { backend: 'chardev', chip: CHIP, boardResets: 2, lastResetAt: '2026-11-28T19:00:00.000Z', pid: 42 };
    writeFileSync(factsPath, JSON.stringify(facts));
    const addon = pl061();
    const r = inspectGpio(config(), { addon, root: VIRT, factsPath });
    assert.equal(r.status, 'OK');
    const why = 'linux,dummy-virt: not a Raspberry Pi 1-4, and it has a GPIO character device';
    assert.ok(r.summary.startsWith(`backend chardev (${why})`), r.summary);
    assert.match(r.summary, /statusLedLine .*gpiochip0 line 4 output, held by qrvend \(the daemon\)/);
    assert.match(r.summary, /boardResetLine .*gpiochip0 line 5 output value 0, free/);
    assert.match(r.summary, /board resets 2 by the daemon \(last 2026-11-28T19:00:00.000Z\)/);
    const readAsIs = [`request ${CHIP} 5 qrvend-doctor mode=0 value=0`, 'release 30'];
    assert.deepEqual(addon.calls, readAsIs, 'read as-is, given back');
  });

  it('FAILs naming a line held by another consumer, and a line that does not exist', () => {
    const busy = inspectGpio(config({ boardResetLine: 3 }), { addon: pl061(), root: VIRT });
    assert.equal(busy.status, 'FAIL');
    const named = /gpio\.boardResetLine .*gpiochip0 line 3 is held by another consumer "GPIO Key Poweroff"/;
    assert.match(busy.summary, named);
    assert.match(String(busy.action), /gpioinfo/);
    const missing = inspectGpio(config({ statusLedLine: 'GPIO17' }), { addon: pl061(), root: VIRT });
    assert.equal(missing.status, 'FAIL');
    assert.match(missing.summary, /gpio\.statusLedLine "GPIO17": no line named "GPIO17"/);
  });

  it('nothing wired is OK; rpio asked for where rpio cannot run FAILs pointing at chardev', () => {
    assert.equal(inspectGpio(config({ statusLedLine: null, boardResetLine: null })).status, 'OK');
    const r = inspectGpio(config({ backend: 'rpio', statusLedPin: 11 }), { addon: pl061(), root: VIRT });
    assert.equal(r.status, 'FAIL');
    assert.match(r.summary, /use chardev/);
  });
});
