import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanSerial, readHwSerial, serialFromCpuinfo } from '../../src/device/hw-serial.js';
import { deviceInfo, firmwareVersion, terminalIdFor } from '../../src/device/device-info.js';
import { gpioSupport, readBoardModel } from '../../src/device/board.js';
import { createLogger } from '../../src/core/log.js';
import { isQrvendError } from '../../src/core/errors.js';
import { VERSION } from '../../src/core/version.js';

/** test/fixtures/device: filesystem roots laid out like a Pi, an old kernel, a PC (see its README). */
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/device/', import.meta.url));
const root = (name: string) => join(FIXTURES, name);

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: 'info', destination }), lines };
}

describe('readHwSerial', () => {
  it('reads the NUL-terminated device tree serial of a Pi 4', () => {
    assert.deepEqual(readHwSerial({ root: root('pi4-devicetree') }), {
      serial: '10000000a1b2c3d4',
      source: 'device-tree',
      path: join(root('pi4-devicetree'), 'proc/device-tree/serial-number'),
    });
  });

  it('falls back to /sys/firmware/devicetree/base when /proc/device-tree is absent, keeping leading zeros', () => {
    const hw = readHwSerial({ root: root('sysfs-devicetree') });
    assert.equal(hw.serial, '00000000deadbeef');
    assert.equal(hw.source, 'device-tree');
  });

  it('reads the Serial line of /proc/cpuinfo on an older kernel', () => {
    assert.deepEqual(readHwSerial({ root: root('cpuinfo-only') }), {
      serial: '00000000f00dcafe',
      source: 'cpuinfo',
      path: join(root('cpuinfo-only'), 'proc/cpuinfo'),
    });
  });

  it('uses /etc/machine-id with a WARN when the hardware has no serial (all-zero serials count as none)', () => {
    const { log, lines } = capturingLogger();
    const hw = readHwSerial({ root: root('x86-machine-id'), log });
    assert.deepEqual([hw.serial, hw.source], ['4c4c4544003957108052b4c04f384d32', 'machine-id']);
    log.flush();
    const warn = lines.find((l) => l.level === 'warn');
    assert.ok(warn, 'a WARN line');
    assert.equal(warn.code, 'DEVICE_UNAVAILABLE');
    assert.match(String(warn.msg), /device\.hwSerial/);
  });

  it('lets device.hwSerial override the hardware', () => {
    assert.deepEqual(readHwSerial({ root: root('pi4-devicetree'), override: 'SITE-42' }), {
      serial: 'SITE-42',
      source: 'config',
      path: null,
    });
  });

  it('with nothing to read, fails telling the technician to set device.hwSerial', () => {
    assert.throws(
      () => readHwSerial({ root: root('empty') }),
      (err) => isQrvendError(err, 'DEVICE_UNAVAILABLE') && err.hint === 'set device.hwSerial in the configuration',
    );
  });

  it('parses serial values and cpuinfo text', () => {
    assert.equal(cleanSerial('abc\0'), 'abc');
    assert.equal(cleanSerial('0000000000000000\0'), null);
    assert.equal(cleanSerial('\0'), null);
    assert.equal(serialFromCpuinfo('Hardware\t: BCM2835\nSerial\t\t: 10000000cafe0001\n'), '10000000cafe0001');
    assert.equal(serialFromCpuinfo('model name : Intel\n'), null);
    assert.equal(serialFromCpuinfo('Serial : 0000000000000000\n'), null);
  });
});

describe('deviceInfo and terminal id', () => {
  const config = { device: { type: 'qrvend-pi', hwSerial: null }, machine: { terminalId: null } };

  it('combines the hardware serial, both firmware versions and the configured type', () => {
    assert.deepEqual(deviceInfo(config, { boardFirmware: '1.4.2', root: root('pi4-devicetree') }), {
      HwSerial: '10000000a1b2c3d4',
      FWVersion: `qrvend/${VERSION} mdb/1.4.2`,
      Type: 'qrvend-pi',
    });
  });

  it('uses an HwSerial already read, and names only qrvend before the board has answered', () => {
    assert.deepEqual(deviceInfo(config, { boardFirmware: null, hwSerial: 'ABC' }), {
      HwSerial: 'ABC',
      FWVersion: `qrvend/${VERSION}`,
      Type: 'qrvend-pi',
    });
    assert.equal(firmwareVersion(null), `qrvend/${VERSION}`);
  });

  it('honours device.hwSerial', () => {
    const info = deviceInfo(
      { device: { type: 't', hwSerial: 'OVERRIDE-1' } },
      { boardFirmware: null, root: root('pi4-devicetree') },
    );
    assert.equal(info.HwSerial, 'OVERRIDE-1');
  });

  it('TerminalId defaults to the HwSerial and machine.terminalId wins when set', () => {
    assert.equal(terminalIdFor(config, '10000000a1b2c3d4'), '10000000a1b2c3d4');
    assert.equal(terminalIdFor({ machine: { terminalId: 'T-0042' } }, '10000000a1b2c3d4'), 'T-0042');
  });
});

describe('board model', () => {
  it('reads the device tree model and tells which GPIO driver applies', () => {
    assert.equal(readBoardModel(root('pi4-devicetree')), 'Raspberry Pi 4 Model B Rev 1.4');
    assert.equal(readBoardModel(root('sysfs-devicetree')), 'Raspberry Pi 3 Model B Plus Rev 1.3');
    assert.equal(readBoardModel(root('empty')), null);
    assert.equal(gpioSupport('Raspberry Pi 4 Model B Rev 1.4'), 'rpio');
    assert.equal(gpioSupport('Raspberry Pi Zero 2 W Rev 1.0'), 'rpio');
    assert.equal(gpioSupport(readBoardModel(root('pi5'))), 'pi5-unsupported');
    assert.equal(gpioSupport('Raspberry Pi Compute Module 5 Rev 1.0'), 'pi5-unsupported');
    assert.equal(gpioSupport('Raspberry Pi 500 Rev 1.0'), 'pi5-unsupported');
    assert.equal(gpioSupport(null), 'not-a-pi');
    assert.equal(gpioSupport('Radxa ROCK 4'), 'not-a-pi');
  });
});
