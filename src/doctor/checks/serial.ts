/**
 * The MDB adapter's serial device exists and can be opened. The agent locks the port while it
 * runs, so a port that is present but locked means the daemon (or another program) has it: that
 * is reported, and the board check then stays off the port instead of fighting for it.
 */
import { existsSync, realpathSync } from 'node:fs';
import { openSerialLink } from '../../mdb/transport/index.js';
import type { Check } from '../types.js';

function isLockedError(message: string): boolean {
  return /cannot lock port|resource temporarily unavailable|EBUSY|device or resource busy/i.test(message);
}

export const serialCheck: Check = {
  id: 'serial',
  title: 'serial device (MDB adapter board)',
  needsConfig: true,
  async run(ctx, config) {
    const { port, baudRate } = config.mdb;
    if (port === 'sim') {
      ctx.facts.serial = 'sim';
      return {
        status: 'OK',
        summary: 'mdb.port is "sim": the built-in VMC simulator, no serial device',
        details: { port },
      };
    }
    if (!existsSync(port)) {
      ctx.facts.serial = 'missing';
      return {
        status: 'FAIL',
        summary: `${port} does not exist`,
        action:
          'check the board is plugged in and powered (ls -l /dev/serial* /dev/ttyACM* /dev/ttyUSB*); ' +
          'on a Raspberry Pi HAT enable the serial port (raspi-config: ' +
          'Interface Options > Serial Port, no login shell); ' +
          'then set mdb.port',
        details: { port },
      };
    }
    const device = realpathSync(port);
    try {
      const link = await openSerialLink({ path: port, baudRate });
      await link.close();
    } catch (err) {
      const message = (err as Error).message;
      if (isLockedError(message)) {
        ctx.facts.serial = 'busy';
        return {
          status: 'WARN',
          summary: `${port} is in use by another process (the qrvend daemon holds it while it runs)`,
          action: 'nothing if the service is running; otherwise find the holder with: fuser -v ' + device,
          details: { port, device, busy: true },
        };
      }
      ctx.facts.serial = 'unusable';
      const permission = /permission denied|EACCES/i.test(message);
      return {
        status: 'FAIL',
        summary: `${port} cannot be opened: ${message}`,
        action: permission
          ? `the user needs the dialout group (the service user qrvend has ` +
            `it): run the doctor as root or qrvend; ls -l ${device}`
          : `check the device with: ls -l ${device}; dmesg | tail`,
        details: { port, device },
      };
    }
    ctx.facts.serial = 'usable';
    return { status: 'OK', summary: `${port} opens at ${baudRate} baud`, details: { port, device, baudRate } };
  },
};
