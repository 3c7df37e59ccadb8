/**
 * What a GPIO backend hands to src/device/gpio.ts: up to three lines, already requested. The LED
 * blink, the reset pulse and the backlight logic live above this, the same for every backend.
 */
export interface OutputLine {
  write(on: boolean): void;
}

/** Open-drain style: assert() drives the line low, release() lets the board's pull-up take it. */
export interface ResetLine {
  assert(): void;
  release(): void;
}

export type GpioBackendName = 'rpio' | 'chardev' | 'mock';

export interface GpioLines {
  backend: GpioBackendName;
  /** The chip the lines are on (chardev), for the log and doctor. */
  chip: string | null;
  led: OutputLine | null;
  reset: ResetLine | null;
  backlight: OutputLine | null;
  /** The values the kernel reports for the held lines (chardev), for the stats line; absent where unknown. */
  readBack?(): Record<'led' | 'reset' | 'backlight', number | null>;
  /** Releases every line: the LED goes dark, the reset line is let go. */
  close(): void;
}
