/** The session around a machine: the whole-read bound, and a port that fails mid-read. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isQrvendError } from '../../../src/core/errors.js';
import { silentLogger } from '../../../src/core/log.js';
import type { LinkMachine } from '../../../src/dex/link/machine.js';
import type { DexPort } from '../../../src/dex/link/port.js';
import { runSession } from '../../../src/dex/link/session.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

/** A VMC that answers every ENQ and never sends the file: each answer re-arms the protocol's timer. */
const chatty: LinkMachine<number> = {
  baudRate: 9600,
  initial: () => 0,
  step: (n, input) => ({
    state: n + 1,
    effects:
      input.kind === 'bytes'
        ? [
            { kind: 'send', bytes: Buffer.from([5]), delayMs: 0 },
            { kind: 'timer', ms: 10_000 },
          ]
        : [{ kind: 'timer', ms: 10_000 }],
  }),
};

function fakePort(): DexPort & { written: number; push(b: Buffer): void; lose(r: string): void } {
  let onData: (b: Buffer) => void = () => {};
  let onLost: (r: string) => void = () => {};
  const port = {
    written: 0,
    write: async () => {
      port.written++;
      setImmediate(() => onData(Buffer.from([0x10, 0x30]))); // the VMC answers, forever
    },
    setBaud: async () => {},
    onData: (h: (b: Buffer) => void) => void (onData = h),
    onLost: (h: (r: string) => void) => void (onLost = h),
    close: async () => {},
    push: (b: Buffer) => onData(b),
    lose: (r: string) => onLost(r),
  };
  return port;
}

test(
  'a VMC that keeps the session going without finishing it is cut off at the whole-read bound (DEX_TIMEOUT)',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const port = fakePort();
    const read = runSession(chatty, port, 1024, silentLogger(), new Date(), 300);
    port.push(Buffer.from([5]));
    await assert.rejects(
      read,
      (err: unknown) => isQrvendError(err, 'DEX_TIMEOUT') && /did not end within/.test(err.message),
    );
    assert.ok(port.written > 1);
  },
);

test('a port that fails mid-read ends it with DEX_PORT', { timeout: TEST_DEADLINE_MS }, async () => {
  const port = fakePort();
  const read = runSession(chatty, port, 1024, silentLogger());
  port.lose('the port closed (adapter unplugged?)');
  await assert.rejects(read, (err: unknown) => isQrvendError(err, 'DEX_PORT') && /unplugged/.test(err.message));
});

test(
  'a device that stops taking bytes cannot hold the result up: the read ends with its failure',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const port = fakePort();
    port.write = () => new Promise(() => {}); // the write never completes
    const failing: LinkMachine<number> = {
      baudRate: 9600,
      initial: () => 0,
      step: (n, input) =>
        input.kind === 'begin'
          ? {
              state: 1,
              effects: [
                { kind: 'send', bytes: Buffer.from([5]), delayMs: 0 },
                { kind: 'timer', ms: 50 },
              ],
            }
          : {
              state: 2,
              effects: [{ kind: 'fail', code: 'DEX_NO_ANSWER', message: 'no answer', hint: 'check the cable' }],
            },
    };
    await assert.rejects(runSession(failing, port, 1024, silentLogger()), (err: unknown) =>
      isQrvendError(err, 'DEX_NO_ANSWER'),
    );
  },
);
