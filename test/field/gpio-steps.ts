/**
 * The GPIO steps of the field test (docs/decisions/gpio-lines.md item 4, docs/field-test.md): QEMU virt's PL061 chip,
 * driven by the guest's own kernel through the character device. The LED and the reset line are on
 * free PL061 lines; line 3 is held by the kernel's power key (gpio-keys), a busy line for free.
 * Checked through the kernel's own view (`gpioinfo`) and what qrvend reads back (its stats line).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { VmcSimulator } from '../../src/sim/vmc/index.js';
import { waitFor } from './proc.js';
import { q, type Guest } from './ssh.js';
import type { Steps } from './steps.js';

/** The PL061 lines: 3 is the power key's; 4 and 5 are free on QEMU virt. */
export const FIELD_GPIO = { chip: '/dev/gpiochip0', led: 4, reset: 5, powerKey: 3 } as const;

/** gpio.* of the field machine (arm64: Debian's arm64 kernel drives the PL061). */
export function fieldGpioConfig(): Record<string, unknown> {
  return {
    backend: 'chardev',
    chip: FIELD_GPIO.chip,
    statusLedLine: FIELD_GPIO.led,
    boardResetLine: FIELD_GPIO.reset,
    resetPulseMs: 200,
    resetHoldOffS: 5,
  };
}

interface GpioStats {
  backend: string;
  led: string;
  boardResets: number;
  values: { led: number | null; reset: number | null } | null;
}

export interface GpioStepDeps {
  steps: Steps;
  runDir: string;
  facts: Record<string, unknown>;
  g: () => Guest;
  vmc: VmcSimulator;
  /** The site config as provisioned, to derive the busy-line variant for doctor. */
  siteConfig: Record<string, unknown>;
}

/** `line   4:      unnamed     "qrvend"  output  active-high [used]` (libgpiod 1.6's gpioinfo). */
function gpioinfoLine(text: string, offset: number): string {
  const line = text.split('\n').find((l) => new RegExp(`^\\s*line\\s+${offset}:`).test(l));
  if (line === undefined) throw new Error(`gpioinfo shows no line ${offset}:\n${text}`);
  return line;
}

/** The gpio figures of the agent's stats lines since a guest time (seconds since the epoch). */
async function gpioStatsSince(g: Guest, sinceS: number): Promise<GpioStats[]> {
  const cmd = `journalctl -u qrvend -o cat --no-pager --since @${sinceS} | grep '"msg":"stats"' || true`;
  const out = (await g.sh(cmd, 30_000)).stdout;
  return out
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        const gpio = (JSON.parse(l) as { stats?: { gpio?: GpioStats } }).stats?.gpio;
        return gpio ? [gpio] : [];
      } catch {
        return [];
      }
    });
}

async function guestNow(g: Guest): Promise<number> {
  return Number((await g.sh('date +%s', 20_000)).stdout.trim());
}

export async function runGpioSteps(d: GpioStepDeps): Promise<void> {
  const { steps, g, vmc, facts } = d;
  const readerUp = () => (vmc.state().reader === 'enabled' && vmc.state().hostEnabled ? true : undefined);
  const kernelView = 'GPIO: the kernel sees the LED and reset lines held by qrvend, outputs (gpioinfo)';
  await steps.run(kernelView, 60_000, async () => {
    const info = (await g().sh('gpioinfo gpiochip0', 30_000)).stdout;
    writeFileSync(join(d.runDir, 'gpioinfo.txt'), info);
    for (const offset of [FIELD_GPIO.led, FIELD_GPIO.reset]) {
      const line = gpioinfoLine(info, offset);
      const ours = line.includes('"qrvend"') && /\boutput\b/.test(line);
      if (!ours) throw new Error(`PL061 line ${offset} is not a qrvend output: ${line}`);
    }
    const key = gpioinfoLine(info, FIELD_GPIO.powerKey);
    const held = key.includes('[used]') && !key.includes('"qrvend"');
    if (!held) throw new Error(`line ${FIELD_GPIO.powerKey} is not held by the power key: ${key}`);
    facts.gpioinfo = [FIELD_GPIO.powerKey, FIELD_GPIO.led, FIELD_GPIO.reset].map((o) => gpioinfoLine(info, o).trim());
  });

  await steps.run('GPIO: the LED is lit while the reader is up (read back from the line)', 120_000, async () => {
    const since = (await guestNow(g())) - 1;
    const lit = await waitFor(
      'a stats line with the LED ready and its line high',
      90_000,
      async () => {
        const s = await gpioStatsSince(g(), since);
        return s.find((x) => x.led === 'ready' && x.values?.led === 1);
      },
      2_000,
    );
    facts.gpioLedReady = lit;
  });

  await steps.run('GPIO: a board that stops polling: LED fault, reset line pulsed, back up', 300_000, async () => {
    await waitFor('the VMC idle with the reader enabled', 60_000, readerUp, 200);
    const since = await guestNow(g());
    const before = (await gpioStatsSince(g(), since - 120)).at(-1)?.boardResets ?? 0;
    vmc.silent(15_000);
    const pulsed = await waitFor(
      'a stats line counting a new board reset',
      150_000,
      async () => {
        const s = await gpioStatsSince(g(), since);
        return s.find((x) => x.boardResets > before);
      },
      2_000,
    );
    await waitFor('the reader enabled again at the VMC', 150_000, readerUp, 200);
    const all = await gpioStatsSince(g(), since);
    const sawFault = all.some((x) => x.led === 'fault');
    const lit = await waitFor(
      'the LED ready and lit again',
      90_000,
      async () => {
        const s = await gpioStatsSince(g(), since);
        return s.find((x) => x.boardResets > before && x.led === 'ready' && x.values?.led === 1);
      },
      2_000,
    );
    const doctor = await g().sh('qrvend doctor', 90_000, true);
    writeFileSync(join(d.runDir, 'doctor-gpio.txt'), doctor.stdout + doctor.stderr);
    const gpioLine = doctor.stdout.split('\n').find((l) => /GPIO lines/.test(l)) ?? '';
    facts.gpioReset = { before, after: pulsed.boardResets, sawFault, lit, doctor: gpioLine.trim() };
    const faultless = `no stats line showed the LED in fault while the board was silent: ${JSON.stringify(all)}`;
    if (!sawFault) throw new Error(faultless);
    const counted = /^\s*OK\s/.test(gpioLine) && /board resets [1-9]\d* by the daemon/.test(gpioLine);
    if (!counted) throw new Error(`doctor's GPIO line: ${gpioLine}`);
  });

  await steps.run("GPIO: the power key's line configured, doctor FAILs naming the consumer", 120_000, async () => {
    const busy = { ...d.siteConfig, gpio: { ...fieldGpioConfig(), boardResetLine: FIELD_GPIO.powerKey } };
    const path = '/tmp/qrvend-gpio-busy.json';
    await g().sh(`cat > ${q(path)}`, 30_000, false, JSON.stringify(busy, null, 2));
    const doctor = await g().sh(`qrvend doctor --config ${q(path)}; rm -f ${q(path)}`, 90_000, true);
    writeFileSync(join(d.runDir, 'doctor-gpio-busy.txt'), doctor.stdout + doctor.stderr);
    const gpioLine = doctor.stdout.split('\n').find((l) => /GPIO lines/.test(l)) ?? '';
    const m = /line 3 is held by another consumer "([^"]+)"/.exec(gpioLine);
    facts.gpioBusy = gpioLine.trim();
    const named = /^\s*FAIL\s/.test(gpioLine) && m !== null && m[1] !== 'qrvend';
    if (!named) throw new Error(`doctor did not FAIL naming the power key's consumer:\n${doctor.stdout}`);
  });
}
