/**
 * GPIO through rpio (main thread): the status LED, the MDB board's reset line and the display
 * backlight, on physical (header) pin numbers from config.
 *
 * gpio.mode: `pi` = real GPIO, `mock` = rpio's mock mode (pin writes go to memory), `auto` = real
 * GPIO on a Raspberry Pi 1-4 and mock elsewhere, `off` = nothing. rpio is only loaded when a pin
 * is wired. GPIO trouble is logged and leaves no-op handles: a dark LED never stops payments.
 *
 * The reset line is driven open-drain style: low for the pulse, then released (input with
 * pull-up), so qrvend never fights the board's own reset circuit.
 */
import { createRequire } from 'node:module';
import type { QrvendConfig } from '../config/schema.js';
import { ErrorCodes } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { gpioSupport, readBoardModel } from './board.js';

export type GpioConfig = QrvendConfig['gpio'];

/**
 * ready = steady on; offline = slow blink (gateway unreachable, outbox backlog);
 * fault = fast blink (reader or board fault, ledger refusing sessions); off = dark.
 */
export type StatusLedState = 'ready' | 'offline' | 'fault' | 'off';

/** Half-periods of the blink patterns in ms (null = steady). */
export const BLINK_HALF_PERIOD_MS: Record<StatusLedState, number | null> = { ready: null, offline: 500, fault: 100, off: null };
export const RESET_PULSE_MS = 100;

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

export interface GpioTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
  setTimeout(fn: () => void, ms: number): unknown;
}

const realTimers: GpioTimers = {
  // unref: a blinking LED must not keep the process alive at shutdown.
  setInterval: (fn, ms) => setInterval(fn, ms).unref(),
  clearInterval: (h) => clearInterval(h as NodeJS.Timeout),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
};

export interface OpenGpioOptions {
  /** Filesystem root for the board model (tests). */
  root?: string;
  /** rpio itself, or a wrapper around it (tests record pin writes). */
  rpio?: RpioDriver;
  timers?: GpioTimers;
}

export interface Gpio {
  /** What is actually driving the pins. */
  mode: 'pi' | 'mock' | 'off';
  statusLed: { set(state: StatusLedState): void; readonly state: StatusLedState };
  boardReset: { pulse(): Promise<void> };
  backlight: { set(on: boolean): void };
  close(): void;
}

/** Which LED state the health of the machine calls for (a helper for the machine loop). */
export function statusLedStateFor(health: { fault: boolean; gatewayOnline: boolean; outboxPending: number }): StatusLedState {
  if (health.fault) return 'fault';
  if (!health.gatewayOnline && health.outboxPending > 0) return 'offline';
  return 'ready';
}

function resolveMode(config: GpioConfig, root: string | undefined, log: Logger): 'pi' | 'mock' | 'off' {
  if (config.mode === 'off' || config.mode === 'mock') return config.mode;
  const model = readBoardModel(root);
  const support = gpioSupport(model);
  if (support === 'rpio') return 'pi';
  const why = support === 'pi5-unsupported' ? `${model}: rpio does not support the Raspberry Pi 5 GPIO (RP1)` : `not a Raspberry Pi (model: ${model ?? 'unknown'})`;
  if (config.mode === 'pi') {
    log.error({ code: ErrorCodes.DEVICE_UNAVAILABLE, model }, `gpio.mode is "pi" but ${why}; GPIO is off (LED, board reset, backlight do nothing)`);
    return 'off';
  }
  log.info({ model }, `GPIO in mock mode: ${why}`);
  return 'mock';
}

function offGpio(): Gpio {
  let state: StatusLedState = 'off';
  return {
    mode: 'off',
    statusLed: {
      set: (s) => void (state = s),
      get state() {
        return state;
      },
    },
    boardReset: { pulse: async () => {} },
    backlight: { set: () => {} },
    close: () => {},
  };
}

export function openGpio(config: GpioConfig, log: Logger, options: OpenGpioOptions = {}): Gpio {
  const wired = [config.statusLedPin, config.boardResetPin, config.backlightPin].some((p) => p !== null);
  const mode = wired ? resolveMode(config, options.root, log) : 'off';
  if (mode === 'off') return offGpio();
  const timers = options.timers ?? realTimers;
  let rpio: RpioDriver;
  try {
    rpio = options.rpio ?? (createRequire(import.meta.url)('rpio') as RpioDriver);
    rpio.init({ gpiomem: true, mapping: 'physical', mock: mode === 'mock' ? 'raspi-3' : false, close_on_exit: false });
  } catch (err) {
    log.error({ err, code: ErrorCodes.DEVICE_UNAVAILABLE }, 'GPIO cannot be opened (is qrvend in the gpio group, /dev/gpiomem present?); GPIO is off');
    return offGpio();
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
      log.error({ err, code: ErrorCodes.DEVICE_UNAVAILABLE, pin }, `gpio.${name} pin ${pin} cannot be used (a GPIO header pin is needed, physical numbering); it is left unwired`);
      return null;
    }
  };
  const ledPin = openPin('statusLedPin', config.statusLedPin, rpio.OUTPUT, rpio.LOW);
  const resetPin = openPin('boardResetPin', config.boardResetPin, rpio.INPUT, rpio.PULL_UP);
  const backlightPin = openPin('backlightPin', config.backlightPin, rpio.OUTPUT, rpio.HIGH);

  let closed = false;
  let ledState: StatusLedState = 'off';
  let blink: unknown = null;
  let ledOn = false;
  const writeLed = (on: boolean) => {
    ledOn = on;
    if (ledPin !== null && !closed) rpio.write(ledPin, on ? rpio.HIGH : rpio.LOW);
  };
  const stopBlink = () => {
    if (blink !== null) timers.clearInterval(blink);
    blink = null;
  };

  let pulsing: Promise<void> | null = null;

  return {
    mode,
    statusLed: {
      set(state: StatusLedState): void {
        if (closed || state === ledState) return;
        ledState = state;
        stopBlink();
        const half = BLINK_HALF_PERIOD_MS[state];
        writeLed(state !== 'off');
        // One cheap timer toggling one pin; it only exists while blinking.
        if (half !== null && ledPin !== null) blink = timers.setInterval(() => writeLed(!ledOn), half);
      },
      get state() {
        return ledState;
      },
    },
    boardReset: {
      pulse(): Promise<void> {
        if (resetPin === null || closed) return Promise.resolve();
        // A pulse already under way is the pulse the caller wants.
        pulsing ??= new Promise<void>((resolve) => {
          rpio.mode(resetPin, rpio.OUTPUT, rpio.LOW);
          timers.setTimeout(() => {
            if (!closed) rpio.mode(resetPin, rpio.INPUT, rpio.PULL_UP);
            pulsing = null;
            resolve();
          }, RESET_PULSE_MS);
        });
        return pulsing;
      },
    },
    backlight: {
      set(on: boolean): void {
        if (backlightPin !== null && !closed) rpio.write(backlightPin, on ? rpio.HIGH : rpio.LOW);
      },
    },
    close(): void {
      if (closed) return;
      stopBlink();
      writeLed(false);
      closed = true;
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
