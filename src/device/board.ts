/**
 * Which board we run on, from the device tree model string ("Raspberry Pi 4 Model B Rev 1.4").
 * rpio drives the BCM2835-family GPIO of the Raspberry Pi 1 to 4 (and 400, Zero, CM1-4); the
 * Raspberry Pi 5 moved GPIO to the RP1 chip, which rpio does not support.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const MODEL_PATHS = ['proc/device-tree/model', 'sys/firmware/devicetree/base/model'] as const;

export type GpioSupport = 'rpio' | 'pi5-unsupported' | 'not-a-pi';

/** The device tree model, NULs trimmed, or null when there is no device tree (x86, containers). */
export function readBoardModel(root = '/'): string | null {
  for (const rel of MODEL_PATHS) {
    try {
      const model = readFileSync(join(root, rel), 'latin1').replace(/\0/g, '').trim();
      if (model) return model;
    } catch {
      // try the next place
    }
  }
  return null;
}

export function gpioSupport(model: string | null): GpioSupport {
  if (model === null || !/^Raspberry Pi\b/.test(model)) return 'not-a-pi';
  if (/^Raspberry Pi (5|500|Compute Module 5)\b/.test(model)) return 'pi5-unsupported';
  return 'rpio';
}
