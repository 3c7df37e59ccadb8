/**
 * GPIO: which backend the daemon takes here and why, and for the character device each configured
 * line as the kernel sees it (direction, value, who holds it). A line that is missing or held by
 * another consumer is a FAIL naming it (docs/devices.md, "doctor"); the LED and the reset line are
 * the technician's only signs of a dead board.
 */
import { dirname, join } from 'node:path';
import type { QrvendConfig } from '../../config/schema.js';
import { chooseBackend } from '../../device/gpio.js';
import { CONSUMER, findLine, LineMode, loadGpioAddon } from '../../device/gpio/chardev.js';
import type { GpioAddon, LineSpec } from '../../device/gpio/chardev.js';
import { GPIO_FACTS_FILE, readGpioFacts } from '../../device/gpio/facts-file.js';
import type { Check, CheckOutcome } from '../types.js';

type GpioConfig = QrvendConfig['gpio'];

export interface GpioInspectOptions {
  addon?: GpioAddon | Error;
  /** Filesystem root for the board model and /dev (tests). */
  root?: string;
  /** The daemon's facts file (board resets), beside the ledger. */
  factsPath?: string | null;
}

const LINE_KEYS = ['statusLedLine', 'boardResetLine', 'backlightLine'] as const;
const PIN_KEYS = ['statusLedPin', 'boardResetPin', 'backlightPin'] as const;

/** One configured line as the kernel sees it, or the problem with it. */
function describeLine(addon: GpioAddon, config: GpioConfig, key: string, spec: LineSpec, devDir: string | undefined) {
  const found = findLine(addon, config.chip, spec, devDir);
  if (typeof found === 'string') return { problem: `gpio.${key} ${JSON.stringify(spec)}: ${found}` };
  const { info, chipPath } = found;
  const where = `${chipPath} line ${info.offset}${info.name ? ` (${info.name})` : ''}`;
  const direction = info.output ? 'output' : 'input';
  if (info.used && info.consumer !== CONSUMER) {
    return { problem: `gpio.${key} ${where} is held by another consumer "${info.consumer || '(no label)'}"` };
  }
  if (info.used) return { line: `${key} ${where} ${direction}, held by ${CONSUMER} (the daemon)` };
  // A free line is read as it is (no direction change) and given straight back.
  try {
    const fd = addon.request(chipPath, info.offset, `${CONSUMER}-doctor`, LineMode.asIs, 0);
    try {
      return { line: `${key} ${where} ${direction} value ${addon.getValue(fd)}, free (no daemon holds it)` };
    } finally {
      addon.release(fd);
    }
  } catch (err) {
    return { problem: `gpio.${key} ${where} cannot be read: ${(err as Error).message}` };
  }
}

function resetsNote(factsPath: string | null | undefined): string {
  const facts = factsPath ? readGpioFacts(factsPath) : null;
  if (facts === null) return 'board resets: no daemon facts';
  return `board resets ${facts.boardResets} by the daemon${facts.lastResetAt ? ` (last ${facts.lastResetAt})` : ''}`;
}

export function inspectGpio(config: GpioConfig, options: GpioInspectOptions = {}): CheckOutcome {
  const lines = LINE_KEYS.filter((k) => config[k] !== null);
  const pins = PIN_KEYS.filter((k) => config[k] !== null);
  if (config.backend === 'off' || (lines.length === 0 && pins.length === 0)) {
    return { status: 'OK', summary: 'no GPIO wired (gpio.backend off or no line set)', details: { backend: 'off' } };
  }
  const choice = chooseBackend(config, options.root);
  const resets = resetsNote(options.factsPath);
  if (choice.backend !== 'chardev') {
    const wired = pins.map((k) => `${k} ${config[k]}`).join(', ');
    const summary = `backend ${choice.backend} (${choice.why}); ${wired || 'no pin set'}; ${resets}`;
    const action = 'set gpio.backend to chardev with gpio.*Line settings (docs/devices.md)';
    if (choice.backend === 'off') return { status: 'FAIL', summary, action };
    return { status: 'OK', summary, details: { backend: choice.backend } };
  }
  const addon = options.addon ?? loadGpioAddon();
  if (addon instanceof Error) {
    const summary = `backend chardev, but qrvend-gpio.node cannot be loaded: ${addon.message}`;
    return {
      status: 'FAIL',
      summary,
      action: 'reinstall qrvend (the release carries the addon for this architecture)',
    };
  }
  const devDir = options.root === undefined ? undefined : join(options.root, 'dev');
  const seen = lines.map((k) => describeLine(addon, config, k, config[k]!, devDir));
  const problems = seen.flatMap((s) => (s.problem ? [s.problem] : []));
  const fine = seen.flatMap((s) => (s.line ? [s.line] : []));
  const summary = [`backend chardev (${choice.why})`, ...fine, ...problems, resets].join('; ');
  if (problems.length > 0) {
    const action =
      'choose a free line (gpioinfo lists them with their consumers) or free this one; then restart qrvend';
    return { status: 'FAIL', summary, action, details: { problems } };
  }
  const noLines = 'the character device needs gpio.*Line settings (physical pin numbers are for rpio)';
  if (lines.length === 0) return { status: 'WARN', summary, action: noLines };
  return { status: 'OK', summary, details: { backend: 'chardev', lines: fine } };
}

export const gpioCheck: Check = {
  id: 'gpio',
  title: 'GPIO lines',
  needsConfig: true,
  async run(_ctx, config) {
    return inspectGpio(config.gpio, { factsPath: join(dirname(config.store.path), GPIO_FACTS_FILE) });
  },
};
