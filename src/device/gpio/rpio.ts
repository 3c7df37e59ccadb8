/**
 * The rpio backend: the BCM283x/BCM2711 registers of a Raspberry Pi 1-4 through /dev/gpiomem, on
 * physical (header) pin numbers; in mock mode rpio writes to memory (docs/devices.md).
 */
import { createRequire } from 'node:module';
import type { QrvendConfig } from '../../config/schema.js';
import { ErrorCodes } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { GpioLines, OutputLine, ResetLine } from './lines.js';

/** The part of rpio used here (its default export satisfies it). */
export interface RpioDriver {
  init(options: { gpiomem: boolean; mapping: 'physical'; mock: string | false; close_on_exit: boolean }): void;
  open(pin: number, mode: number, option?: number): void;
  mode(pin: number, mode: number, option?: number): void;
  write(pin: number, value: number): void;
  close(pin: number, reset?: number): void;
  readonly INPUT: number;
  readonly OUTPUT: number;
  readonly LOW: number;
  readonly HIGH: number;
  readonly PULL_UP: number;
}

/** Opens the configured pins; null when rpio cannot be loaded or initialised (logged). */
export function openRpioLines(
  config: QrvendConfig['gpio'],
  mock: boolean,
  log: Logger,
  driver?: RpioDriver,
): GpioLines | null {
  let rpio: RpioDriver;
  try {
    rpio = driver ?? (createRequire(import.meta.url)('rpio') as RpioDriver);
    rpio.init({ gpiomem: true, mapping: 'physical', mock: mock ? 'raspi-3' : false, close_on_exit: false });
  } catch (err) {
    const msg = 'GPIO cannot be opened (is qrvend in the gpio group, /dev/gpiomem present?); GPIO is off';
    log.error({ err, code: ErrorCodes.DEVICE_UNAVAILABLE }, msg);
    return null;
  }
  const opened: number[] = [];
  /** Open one pin; a pin rpio refuses (power or ground pin) is logged and left unwired. */
  const openPin = (name: string, pin: number | null, pinMode: number, option: number): number | null => {
    if (pin === null) return null;
    try {
      rpio.open(pin, pinMode, option);
      opened.push(pin);
      return pin;
    } catch (err) {
      const msg =
        `gpio.${name} pin ${pin} cannot be used (a GPIO header pin is needed, physical numbering); ` +
        'it is left unwired';
      log.error({ err, code: ErrorCodes.DEVICE_UNAVAILABLE, pin }, msg);
      return null;
    }
  };
  const output = (pin: number | null): OutputLine | null =>
    pin === null ? null : { write: (on) => rpio.write(pin, on ? rpio.HIGH : rpio.LOW) };
  const ledPin = openPin('statusLedPin', config.statusLedPin, rpio.OUTPUT, rpio.LOW);
  const resetPin = openPin('boardResetPin', config.boardResetPin, rpio.INPUT, rpio.PULL_UP);
  const backlightPin = openPin('backlightPin', config.backlightPin, rpio.OUTPUT, rpio.HIGH);
  // Low for the pulse, then an input with pull-up: qrvend never fights the board's own reset circuit.
  const reset: ResetLine | null =
    resetPin === null
      ? null
      : {
          assert: () => rpio.mode(resetPin, rpio.OUTPUT, rpio.LOW),
          release: () => rpio.mode(resetPin, rpio.INPUT, rpio.PULL_UP),
        };
  return {
    backend: mock ? 'mock' : 'rpio',
    chip: null,
    led: output(ledPin),
    reset,
    backlight: output(backlightPin),
    close() {
      // rpio.close resets each pin to an input: the LED goes dark, the reset line is released.
      for (const pin of opened) {
        try {
          rpio.close(pin);
        } catch (err) {
          log.warn({ err, pin }, 'GPIO pin did not close cleanly');
        }
      }
    },
  };
}
