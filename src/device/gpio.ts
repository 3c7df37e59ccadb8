/**
 * GPIO (main thread): the status LED, the MDB board's reset line and the display backlight, through
 * one of the backends in src/device/gpio/: rpio (Raspberry Pi 1-4 registers, physical pin numbers),
 * chardev (the kernel's GPIO character device, every board with one, chip + line name or offset) or
 * mock (rpio's mock mode). gpio.backend chooses; auto picks by board (docs/devices.md). GPIO trouble
 * is logged and leaves no-op handles: a dark LED never stops payments.
 *
 * The reset line is driven open-drain style: low for the pulse, then released (pull-up), so qrvend
 * never fights the board's own reset circuit.
 */
import { join } from 'node:path';
import type { QrvendConfig } from '../config/schema.js';
import { ErrorCodes } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { gpioSupport, readBoardModel } from './board.js';
import { listChips, openChardevLines, type GpioAddon } from './gpio/chardev.js';
import { writeGpioFacts } from './gpio/facts-file.js';
import type { GpioBackendName, GpioLines } from './gpio/lines.js';
import { openRpioLines, type RpioDriver } from './gpio/rpio.js';

export type { RpioDriver } from './gpio/rpio.js';
export type GpioConfig = QrvendConfig['gpio'];

/**
 * ready = steady on; offline = slow blink (gateway unreachable, outbox backlog);
 * fault = fast blink (reader or board fault, ledger refusing sessions); off = dark.
 */
export type StatusLedState = 'ready' | 'offline' | 'fault' | 'off';

/** Half-periods of the blink patterns in ms (null = steady). */
export const BLINK_HALF_PERIOD_MS: Record<StatusLedState, number | null> = {
  ready: null,
  offline: 500,
  fault: 100,
  off: null,
};
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
  /** Filesystem root for the board model and /dev (tests). */
  root?: string;
  /** rpio itself, or a wrapper around it (tests record pin writes). */
  rpio?: RpioDriver;
  /** The chardev addon, or the error loading it gave (tests). */
  chardev?: GpioAddon | Error;
  timers?: GpioTimers;
  /** Monotonic milliseconds, for the reset hold-off (tests). */
  now?: () => number;
  /** Where the backend and the reset count go for `qrvend doctor` (src/device/gpio/facts-file.ts). */
  factsPath?: string;
}

export interface Gpio {
  /** What is actually driving the lines. */
  mode: GpioBackendName | 'off';
  /** The chip the chardev lines are on, else null. */
  chip: string | null;
  statusLed: { set(state: StatusLedState): void; readonly state: StatusLedState };
  /** pulse() skips (resolves at once) within gpio.resetHoldOffS of the last pulse; pulses counts the ones made. */
  boardReset: { pulse(): Promise<void>; readonly pulses: number; readonly wired: boolean };
  backlight: { set(on: boolean): void };
  /** For the stats line and the fleet's health: the backend, the pulses made, the lines' values read back. */
  stats(): GpioStats;
  close(): void;
}

export interface GpioStats {
  backend: GpioBackendName | 'off';
  chip: string | null;
  led: StatusLedState;
  boardResets: number;
  values: Record<'led' | 'reset' | 'backlight', number | null> | null;
}

/**
 * Which LED state the machine calls for (src/mdb/status-led.ts). `reader`: the board's polls and the
 * reader's state (src/mdb/reader-view.ts); down is a fault, waiting (alive, not enabled) a slow blink.
 */
export function statusLedStateFor(health: {
  fault: boolean;
  gatewayOnline: boolean;
  outboxPending: number;
  reader?: 'up' | 'waiting' | 'down';
}): StatusLedState {
  if (health.fault || health.reader === 'down') return 'fault';
  if (health.reader === 'waiting') return 'offline';
  if (!health.gatewayOnline && health.outboxPending > 0) return 'offline';
  return 'ready';
}

type Choice = { backend: GpioBackendName | 'off'; why: string };

/** Which backend gpio.backend and the board call for (docs/devices.md, "Which backend"). */
export function chooseBackend(config: GpioConfig, root = '/'): Choice {
  const model = readBoardModel(root);
  const support = gpioSupport(model);
  if (config.backend === 'rpio' && support !== 'rpio') {
    const what = support === 'pi5-unsupported' ? 'its RP1 GPIO' : 'this board';
    const why = `gpio.backend is "rpio" but rpio does not support ${what} (${model ?? 'no model'}): use chardev`;
    return { backend: 'off', why };
  }
  if (config.backend !== 'auto') return { backend: config.backend, why: `gpio.backend is "${config.backend}"` };
  const hasChip = listChips(join(root, 'dev')).length > 0;
  const board = model ?? 'no device tree model';
  if (support === 'rpio') {
    // rpio cannot take physical pins it does not know, so a chardev-only configuration goes to chardev.
    const linesOnly = [config.statusLedPin, config.boardResetPin, config.backlightPin].every((p) => p === null);
    if (linesOnly && hasChip) return { backend: 'chardev', why: `${board}: only gpio.*Line settings are given` };
    return { backend: 'rpio', why: `${board}: rpio drives this board` };
  }
  const notRpio = support === 'pi5-unsupported' ? 'rpio does not support its RP1 GPIO' : 'not a Raspberry Pi 1-4';
  if (hasChip) return { backend: 'chardev', why: `${board}: ${notRpio}, and it has a GPIO character device` };
  return { backend: 'mock', why: `${board}: ${notRpio}, and it has no /dev/gpiochip*` };
}

function offGpio(): Gpio {
  let state: StatusLedState = 'off';
  return {
    mode: 'off',
    chip: null,
    statusLed: {
      set: (s) => void (state = s),
      get state() {
        return state;
      },
    },
    boardReset: { pulse: async () => {}, pulses: 0, wired: false },
    backlight: { set: () => {} },
    stats: () => ({ backend: 'off', chip: null, led: state, boardResets: 0, values: null }),
    close: () => {},
  };
}

function openLines(config: GpioConfig, log: Logger, options: OpenGpioOptions): GpioLines | null {
  const choice = chooseBackend(config, options.root);
  if (choice.backend === 'off') {
    const msg = `${choice.why}; GPIO is off (LED, board reset, backlight do nothing)`;
    if (config.backend !== 'off') log.error({ code: ErrorCodes.DEVICE_UNAVAILABLE }, msg);
    return null;
  }
  log.info({ backend: choice.backend }, `GPIO backend ${choice.backend}: ${choice.why}`);
  if (choice.backend === 'chardev') {
    const linesGiven = [config.statusLedLine, config.boardResetLine, config.backlightLine].some((l) => l !== null);
    if (!linesGiven) {
      const msg = 'GPIO backend chardev but no gpio.*Line is set (physical pin numbers are for rpio); GPIO is off';
      log.error({ code: ErrorCodes.CONFIG_INVALID }, msg);
      return null;
    }
    const devDir = options.root === undefined ? undefined : join(options.root, 'dev');
    return openChardevLines(config, log, { addon: options.chardev, devDir });
  }
  return openRpioLines(config, choice.backend === 'mock', log, options.rpio);
}

export function openGpio(config: GpioConfig, log: Logger, options: OpenGpioOptions = {}): Gpio {
  const { statusLedPin, boardResetPin, backlightPin, statusLedLine, boardResetLine, backlightLine } = config;
  const settings = [statusLedPin, boardResetPin, backlightPin, statusLedLine, boardResetLine, backlightLine];
  const wired = settings.some((p) => p !== null);
  const lines = wired ? openLines(config, log, options) : null;
  return lines === null ? offGpio() : gpioOver(lines, config, options, log);
}

/** The LED patterns, the reset pulse and the backlight over a backend's lines. */
interface PulseContext {
  config: GpioConfig;
  timers: GpioTimers;
  now: () => number;
  log: Logger;
  isClosed: () => boolean;
  /** Called with the count and the wall-clock time after each pulse begins (the facts file). */
  onPulse: (pulses: number, atIso: string) => void;
}

/** The reset pulse: gpio.resetPulseMs low, then released; skipped within gpio.resetHoldOffS; counted. */
function boardResetOver(reset: GpioLines['reset'], c: PulseContext): Gpio['boardReset'] {
  let pulsing: Promise<void> | null = null;
  let pulses = 0;
  let lastPulseAt: number | null = null;
  return {
    pulse(): Promise<void> {
      if (reset === null || c.isClosed()) return Promise.resolve();
      // A pulse already under way is the pulse the caller wants.
      if (pulsing !== null) return pulsing;
      // A board that boots slowly is not reset again and again (gpio.resetHoldOffS).
      if (lastPulseAt !== null && c.now() - lastPulseAt < c.config.resetHoldOffS * 1000) {
        const holdOff = c.config.resetHoldOffS;
        const msg = `GPIO: board reset skipped, the last pulse was under gpio.resetHoldOffS (${holdOff} s) ago`;
        c.log.warn({ boardResets: pulses }, msg);
        return Promise.resolve();
      }
      lastPulseAt = c.now();
      pulses += 1;
      c.onPulse(pulses, new Date().toISOString());
      c.log.warn({ boardResets: pulses, pulseMs: c.config.resetPulseMs }, 'GPIO: pulsing the board reset line');
      pulsing = new Promise<void>((resolve) => {
        reset.assert();
        c.timers.setTimeout(() => {
          if (!c.isClosed()) reset.release();
          pulsing = null;
          resolve();
        }, c.config.resetPulseMs);
      });
      return pulsing;
    },
    get pulses() {
      return pulses;
    },
    wired: reset !== null,
  };
}

function gpioOver(lines: GpioLines, config: GpioConfig, options: OpenGpioOptions, log: Logger): Gpio {
  const timers = options.timers ?? realTimers;
  let closed = false;
  let ledState: StatusLedState = 'off';
  let blink: unknown = null;
  let ledOn = false;
  const writeLed = (on: boolean) => {
    ledOn = on;
    if (!closed) lines.led?.write(on);
  };
  const stopBlink = () => {
    if (blink !== null) timers.clearInterval(blink);
    blink = null;
  };
  const writeFacts = (boardResets: number, lastResetAt: string | null) => {
    if (options.factsPath === undefined) return;
    const facts = { backend: lines.backend, chip: lines.chip, boardResets, lastResetAt, pid: process.pid };
    const failed = (err: Error) => log.warn({ err: err.message }, 'GPIO facts file not written');
    writeGpioFacts(options.factsPath, facts).catch(failed);
  };
  writeFacts(0, null);
  const now = options.now ?? (() => performance.now());
  const isClosed = () => closed;
  const boardReset = boardResetOver(lines.reset, { config, timers, now, log, isClosed, onPulse: writeFacts });
  return {
    mode: lines.backend,
    chip: lines.chip,
    statusLed: {
      set(state: StatusLedState): void {
        if (closed || state === ledState) return;
        ledState = state;
        stopBlink();
        const half = BLINK_HALF_PERIOD_MS[state];
        writeLed(state !== 'off');
        // One cheap timer toggling one line; it only exists while blinking.
        if (half !== null && lines.led !== null) blink = timers.setInterval(() => writeLed(!ledOn), half);
      },
      get state() {
        return ledState;
      },
    },
    boardReset,
    backlight: {
      set(on: boolean): void {
        if (!closed) lines.backlight?.write(on);
      },
    },
    stats: () => ({
      backend: lines.backend,
      chip: lines.chip,
      led: ledState,
      boardResets: boardReset.pulses,
      values: closed ? null : (lines.readBack?.() ?? null),
    }),
    close(): void {
      if (closed) return;
      stopBlink();
      writeLed(false);
      closed = true;
      lines.close();
    },
  };
}
