/** The link supervisor on its own: a device that vanishes without a close event, and reopen backoff. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LinkSupervisor, type ByteLink } from '../../src/mdb/transport/index.js';
import { ErrorCodes, QrvendError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/log.js';
import { waitFor } from './support.js';

/** A link that never says anything and never reports a close: a binding spinning on zero-byte reads. */
function mute(): ByteLink & { written: string[]; feed(s: string): void } {
  let onData: (c: Buffer) => void = () => {};
  const written: string[] = [];
  return {
    description: 'mute',
    written,
    write: (d) => void written.push(d.toString()),
    onData: (h) => void (onData = h),
    onClose: () => {},
    close: async () => {},
    drain: async () => {},
    feed: (s) => onData(Buffer.from(s)),
  };
}

test(
  'a device path that vanishes is noticed by the watchdog even without a close event',
  { timeout: 5000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-sup-'));
    const device = join(dir, 'ttyFAKE');
    writeFileSync(device, '');
    const events: string[] = [];
    let opens = 0;
    const sup = new LinkSupervisor({
      open: async () => {
        opens += 1;
        if (opens > 1 && !(await import('node:fs')).existsSync(device)) {
          throw new QrvendError(ErrorCodes.SERIAL_OPEN_FAILED, 'no device');
        }
        return mute();
      },
      devicePath: device,
      maxLineLength: 64,
      linkWatchdogMs: 100,
      reopenMinMs: 20,
      reopenMaxMs: 80,
      log: silentLogger(),
      onUp: () => events.push('up'),
      onDown: (r) => events.push(`down: ${r}`),
      onLine: (l) => events.push(`line ${l}`),
      onOverlong: () => events.push('overlong'),
      onSilent: () => events.push('silent'),
    });
    try {
      sup.start();
      await waitFor('up', () => events.includes('up'));
      rmSync(device);
      await waitFor('down', () => events.find((e) => e.startsWith('down')));
      assert.match(
        events.find((e) => e.startsWith('down'))!,
        /vanished/,
      );
      assert.ok(!events.includes('silent'), 'a vanished device is not reported as a silent one');
      await new Promise((r) => setTimeout(r, 200));
      const failures = sup.stats().openFailures;
      assert.ok(failures >= 2, `kept retrying (${failures})`);
      assert.ok(failures < 12, `with backoff, not a busy loop (${failures})`);
      writeFileSync(device, '');
      await waitFor('up again', () => events.filter((e) => e === 'up').length === 2, 2000);
      assert.equal(sup.stats().reopens, 1);
    } finally {
      await sup.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'a silent link with the device present is reported as silent; lines keep the watchdog quiet',
  { timeout: 5000 },
  async () => {
    const link = mute();
    const events: string[] = [];
    const sup = new LinkSupervisor({
      open: async () => link,
      devicePath: null,
      maxLineLength: 16,
      linkWatchdogMs: 100,
      reopenMinMs: 20,
      reopenMaxMs: 80,
      log: silentLogger(),
      onUp: () => events.push('up'),
      onDown: (r) => events.push(`down: ${r}`),
      onLine: (l) => events.push(`line ${l}`),
      onOverlong: () => events.push('overlong'),
      onSilent: () => events.push('silent'),
    });
    try {
      sup.start();
      await waitFor('up', () => events.includes('up'));
      for (let i = 0; i < 6; i++) {
        link.feed('r,ACK\r\n');
        await new Promise((r) => setTimeout(r, 40));
      }
      assert.ok(!events.includes('silent'), 'lines every 40 ms keep a 100 ms watchdog quiet');
      link.feed(`${'x'.repeat(40)}\r\n`);
      assert.ok(events.includes('overlong'));
      await waitFor('silent', () => events.includes('silent'), 1000);
      assert.ok(sup.writeLine('V'));
      assert.deepEqual(link.written.at(-1), 'V\r\n');
    } finally {
      await sup.stop();
    }
    assert.equal(sup.writeLine('V'), false, 'nothing is written once stopped');
  },
);
