/**
 * QR render time (docs/decisions/targets.md: QR render to an 800x480 32-bit framebuffer, p99 <= 20 ms).
 *
 * Each sample is the display worker's whole job for a new dynamic QR: encode the QR (a new
 * TransactionId each time, so the QR matrix cache never helps), draw the screen (clear, QR,
 * amount, countdown) into an 800x480 XRGB8888 frame, and write the frame with the product's
 * framebuffer output to a file laid out like /dev/fb0 (geometry from a sysfs fixture next to it).
 */
import { closeSync, mkdirSync, openSync, ftruncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Screen } from '../src/ipc/messages.js';
import { openFramebuffer } from '../src/display/outputs/framebuffer.js';
import { BENCH_GEOMETRY, timeRenders } from '../src/display/timing.js';
import { measured, notMeasured, type Figure } from './figure.js';
import { Budget } from './support/budget.js';
import { diskScratchDir } from './support/machine.js';
import { summarize } from './stats.js';

const TARGET = { text: 'p99 <= 20 ms', checks: [{ stat: 'p99' as const, op: '<=' as const, limit: 20 }] };
const BASE = {
  id: 'qr-render',
  what: 'QR render to an 800x480 32-bit framebuffer (new QR each time, written to a framebuffer file)',
  unit: 'ms',
  target: TARGET,
};

/** A payload as long as an EMVCo merchant-presented QR, unique per transaction. */
function qrPayload(n: number): string {
  const tx = n.toString(16).padStart(32, '0');
  return (
    `00020101021226860014com.example.pay0136${tx}0208QRVEND010311VENDING-0015204581453039785405` +
    `${(1 + (n % 9)).toFixed(2).padStart(5, '0')}5802DE5913QRVEND DEMO 16005BERLIN62410525` +
    `${tx.slice(0, 25)}0708QRVEND016304ABCD`
  );
}

/** A directory that looks like /sys for one 800x480 32 bpp framebuffer, and the "device" file. */
export function fakeFramebuffer(dir: string): { device: string; sysfs: string } {
  const { width, height, stride } = BENCH_GEOMETRY;
  const sysfs = join(dir, 'sys');
  const fbDir = join(sysfs, 'class', 'graphics', 'fb0');
  mkdirSync(fbDir, { recursive: true });
  writeFileSync(join(fbDir, 'virtual_size'), `${width},${height}\n`);
  writeFileSync(join(fbDir, 'bits_per_pixel'), '32\n');
  writeFileSync(join(fbDir, 'stride'), `${stride}\n`);
  writeFileSync(join(fbDir, 'modes'), `U:${width}x${height}p-0\n`);
  const device = join(dir, 'fb0');
  const fd = openSync(device, 'w');
  ftruncateSync(fd, stride * height);
  closeSync(fd);
  return { device, sysfs };
}

export async function benchQrRender(budget: Budget, renders = 1000): Promise<Figure[]> {
  const scratch = diskScratchDir('qr');
  try {
    const fake = fakeFramebuffer(scratch.dir);
    const fb = openFramebuffer(fake.device, fake.sysfs);
    const now = () => 1_700_000_000_000;
    const screen = (n: number): Screen => ({
      kind: 'dynamic-qr',
      qrText: qrPayload(n),
      amount: 1 + (n % 9),
      currencyCode: 'EUR',
      decimalPlaces: 2,
      item: 12,
      expiresAtMs: now() + 45_000,
    });
    const options = { geometry: fb.geometry, output: (frame: Parameters<typeof fb.write>[0]) => fb.write(frame), now };
    try {
      timeRenders(screen(0), 20, options); // warm-up: JIT, font, first allocations
      const fresh: number[] = [];
      for (let n = 1; n <= renders && !budget.spent; n++) fresh.push(...timeRenders(screen(n), 1, options));
      // The same QR drawn again (countdown ticks): the matrix comes from the cache.
      const again = summarize(timeRenders(screen(1), Math.min(200, renders), options));
      return [
        measured(
          {
            ...BASE,
            context: {
              format: fb.geometry.format,
              stride: fb.geometry.stride,
              qrPayloadChars: qrPayload(1).length,
              redrawSameQrP99Ms: Math.round(again.p99 * 1000) / 1000,
            },
          },
          { samples: fresh.length, summary: summarize(fresh) },
        ),
      ];
    } finally {
      fb.close();
    }
  } catch (err) {
    return [notMeasured(BASE, 'error', (err as Error).message)];
  } finally {
    scratch.remove();
  }
}
