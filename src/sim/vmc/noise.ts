/**
 * Line noise for fault tests: random bytes, lines longer than any valid one, truncated lines and
 * lines with broken fields. Every noise line is terminated (so it cannot glue itself to the real
 * line after it) and none of them is a valid protocol line, so the protocol around it must
 * survive untouched.
 */

export type NoiseKind = 'random' | 'overlong' | 'partial' | 'garbled';

export const NOISE_KINDS: readonly NoiseKind[] = ['random', 'overlong', 'partial', 'garbled'];

const GARBLED = [
  'c,STATUS,VEND,1.5x,12',
  'c,STATUS,VEND,1.50',
  'c,STATUS,VEND,1.50,item',
  'c,STATUS,IDLE,abc',
  'c,STATUS,IDLE,1.00,2',
  'c,STATUS,BOGUS',
  'c,ERR,VEND x',
  'c,ERR,',
  'c,VEND,MAYBE',
  'c,SET,NO',
  'c,2',
  'v,only-one-field',
  'r,NAK',
  'C,START,5.00',
];
const TRUNCATE_FROM = 'c,STATUS,VEND,1.50,12';

export function noiseLine(kind: NoiseKind, random: () => number, maxLineLength: number): Buffer {
  const int = (n: number) => Math.floor(random() * n);
  switch (kind) {
    case 'random': {
      const len = 1 + int(80);
      const bytes = Buffer.alloc(len);
      for (let i = 0; i < len; i++) {
        let b = int(256);
        if (b === 0x0a) b = 0x00;
        bytes[i] = b;
      }
      bytes[0] = 0x80 + int(0x7f); // never starts like a protocol line
      return Buffer.concat([bytes, Buffer.from('\r\n')]);
    }
    case 'overlong': {
      const len = maxLineLength + 1 + int(maxLineLength * 3);
      return Buffer.from(`c,STATUS,VEND,${'9'.repeat(len)}\r\n`, 'latin1');
    }
    case 'partial':
      // Any proper prefix of the vend request up to "c,STATUS,VEN" is not a protocol line.
      return Buffer.from(`${TRUNCATE_FROM.slice(0, 1 + int(12))}\r\n`, 'latin1');
    case 'garbled':
      return Buffer.from(`${GARBLED[int(GARBLED.length)]}\r\n`, 'latin1');
  }
}
