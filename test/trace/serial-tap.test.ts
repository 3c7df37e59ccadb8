/** The serial tap's checks and its trace format (the tap end to end: test/scripts/serial-trace.test.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkDevicePath } from '../../src/trace/serial-tap.js';
import { formatChunk } from '../../src/trace/format.js';
import { isQrvendError } from '../../src/core/errors.js';

const T = { timeout: 5_000 };

test('plain /dev paths are accepted', T, () => {
  for (const path of [
    '/dev/ttyUSB0',
    '/dev/serial0',
    '/dev/pts/3',
    '/dev/serial/by-id/usb-FTDI_FT232R-if00-port0',
    '/dev/tty.usbserial-A1',
  ]) {
    assert.equal(checkDevicePath(path), path);
  }
});

test('anything else is refused with CLI_USAGE naming the path', T, () => {
  for (const path of [
    '/dev/null!!SYSTEM:id',
    '/tmp/tty',
    'dev/ttyS0',
    '/dev/ttyS0 ',
    '/dev/tty$(id)',
    '/dev/ttyS0,b9600',
    '/dev/../etc/shadow',
    '/dev/',
    '/dev/tty\nS0',
    '',
  ]) {
    assert.throws(
      () => checkDevicePath(path),
      (err: unknown) => isQrvendError(err, 'CLI_USAGE') && err.message.includes(JSON.stringify(path)),
      path,
    );
  }
});

test('a chunk is a header and 16 bytes a line; control bytes and escapes show as dots', T, () => {
  const chunk = Buffer.from('c,STATUS,IDLE\r\n\u001b[2J', 'latin1');
  const text = formatChunk('>', chunk, new Date(Date.UTC(2026, 10, 23, 1, 2, 3, 4)));
  assert.equal(
    text,
    [
      '> 2026-11-23T01:02:03.004Z length=19 board -> agent',
      ' 63 2c 53 54 41 54 55 53 2c 49 44 4c 45 0d 0a 1b  c,STATUS,IDLE...',
      ' 5b 32 4a                                         [2J',
      '',
    ].join('\n'),
  );
  assert.doesNotMatch(text, /\u001b/);
});
