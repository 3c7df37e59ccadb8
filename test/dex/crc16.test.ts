import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc16 } from '../../src/dex/crc16.js';

test('crc16 is CRC-16/ARC: the catalogue check value of "123456789" is 0xBB3D', () => {
  assert.equal(crc16(Buffer.from('123456789', 'ascii')), 0xbb3d);
});

test('crc16 over pieces equals crc16 over the whole', () => {
  const whole = Buffer.from('DXS*9252131001*VA*V0/6*1\r\nST*001*0001\r\n', 'ascii');
  const first = crc16(whole.subarray(0, 11));
  assert.equal(crc16(whole.subarray(11), first), crc16(whole));
  assert.equal(crc16(new Uint8Array(0)), 0);
});
