/** Where screens go: the framebuffer device and/or the PNG file must be writable. */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Check } from '../types.js';

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export const displayCheck: Check = {
  id: 'display',
  title: 'display output',
  needsConfig: true,
  async run(_ctx, config) {
    const { framebuffer, png, terminal } = config.display;
    const problems: string[] = [];
    const fine: string[] = [];
    if (framebuffer !== null) {
      if (!existsSync(framebuffer))
        problems.push(
          `framebuffer ${framebuffer} does not exist (display not connected or driver not loaded; ls /dev/fb*)`,
        );
      else if (!writable(framebuffer))
        problems.push(
          `framebuffer ${framebuffer} is not writable by this user (the service user qrvend is in group video)`,
        );
      else fine.push(`framebuffer ${framebuffer} writable`);
    }
    if (png !== null) {
      const target = existsSync(png) ? png : dirname(png);
      if (!existsSync(target)) problems.push(`PNG directory ${target} does not exist`);
      else if (!writable(target)) problems.push(`PNG ${target} is not writable by this user`);
      else fine.push(`PNG ${png} writable`);
    }
    if (terminal) fine.push('terminal output on');
    const details = { framebuffer, png, terminal };
    if (problems.length > 0) {
      return {
        status: 'FAIL',
        summary: problems.join('; '),
        action: 'fix display.framebuffer / display.png, or the device permissions',
        details,
      };
    }
    if (fine.length === 0) {
      return {
        status: 'WARN',
        summary: 'no display configured: consumers see no QR code or amount',
        action: 'set display.framebuffer (e.g. /dev/fb0) or display.png',
        details,
      };
    }
    return { status: 'OK', summary: fine.join(', '), details };
  },
};
