/** The status LED, the board reset line and the backlight (docs/devices.md). */
import { z } from 'zod';
import { int, GpioChip, GpioLine } from './primitives.js';

export const GpioSection = z
  .strictObject({
    /**
     * auto = rpio on a Raspberry Pi 1-4, the kernel's character device on any other board with one,
     * mock where neither exists; off = no GPIO at all (docs/devices.md).
     */
    backend: z.enum(['auto', 'rpio', 'chardev', 'mock', 'off']),
    /** The name before gpio.backend (pi = rpio); kept so older configs still load (docs/devices.md). */
    mode: z.enum(['auto', 'pi', 'mock', 'off']).optional(),
    /** Physical (board) pin numbers for rpio; null = not wired. */
    statusLedPin: int(1, 40).nullable(),
    boardResetPin: int(1, 40).nullable(),
    backlightPin: int(1, 40).nullable(),
    /** chardev: the chip, by path (/dev/gpiochip0) or label (pinctrl-rp1); null = the first chip. */
    chip: GpioChip.nullable(),
    /** chardev: a line by name from the device tree (GPIO17) or offset on the chip; null = not wired. */
    statusLedLine: GpioLine.nullable(),
    boardResetLine: GpioLine.nullable(),
    backlightLine: GpioLine.nullable(),
    /** How long the reset line is held low; the adapter boards want >= 10 ms. */
    resetPulseMs: int(10, 5_000),
    /** No second pulse sooner than this after one, so a board that boots slowly is not reset in a loop. */
    resetHoldOffS: int(5, 3_600),
  })
  .superRefine((g, ctx) => {
    const fromMode = g.mode === undefined || g.mode === 'auto' ? null : g.mode === 'pi' ? 'rpio' : g.mode;
    if (fromMode !== null && g.backend !== 'auto' && g.backend !== fromMode) {
      ctx.addIssue({
        code: 'custom',
        path: ['mode'],
        message:
          `gpio.mode "${g.mode}" disagrees with gpio.backend "${g.backend}": remove gpio.mode (gpio.backend ` +
          `replaced it)`,
      });
    }
  })
  .transform(({ mode, ...g }) => ({
    ...g,
    backend:
      g.backend === 'auto' && mode !== undefined && mode !== 'auto' ? (mode === 'pi' ? 'rpio' : mode) : g.backend,
  }));
