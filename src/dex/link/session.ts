/**
 * Runs one protocol machine over an open port: feeds it the bytes and its timer, carries out its
 * effects, resolves with the file or rejects with a QrvendError. The work per received chunk is
 * one step of the machine, so a read never holds up the MDB loop sharing the main thread.
 */
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { LinkEffect, LinkInput, LinkMachine } from './machine.js';
import type { DexPort } from './port.js';

/**
 * A bound on the whole read, whatever the VMC does: the protocols' own timers are re-armed by
 * every answer, so a VMC repeating itself forever would otherwise hold the port forever. A minute
 * plus the largest file at 100 bytes a second (DDCMP at 2400 baud with its acknowledgements).
 */
/** How long the last queued bytes may take to go out once the read has ended. */
const FLUSH_WAIT_MS = 1000;

export function readDeadlineMs(maxFileBytes: number): number {
  return 60_000 + Math.ceil(maxFileBytes / 100) * 1000;
}

export function runSession<S>(
  machine: LinkMachine<S>,
  port: DexPort,
  maxFileBytes: number,
  log: Logger,
  now: Date = new Date(),
  deadlineMs = readDeadlineMs(maxFileBytes),
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let state = machine.initial(maxFileBytes);
    let timer: NodeJS.Timeout | undefined;
    const deadline = setTimeout(
      () =>
        finish(
          new QrvendError(
            ErrorCodes.DEX_TIMEOUT,
            `the DEX read did not end within ${Math.round(deadlineMs / 1000)}` +
              ` s (the VMC kept the session going without finishing it)`,
            {
              hint:
                'power-cycle the VMC if it keeps doing this; check that ' +
                'dex.maxFileBytes is not far larger than its files',
            },
          ),
        ),
      deadlineMs,
    );
    let writes: Promise<void> = Promise.resolve();
    let ended = false;

    const finish = (err: QrvendError | null, file?: Buffer): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      clearTimeout(deadline);
      // Whatever was queued (an EOT, a last ACK) goes out before the caller closes the port;
      // a device that stopped taking bytes must not hold the result up.
      let wait: NodeJS.Timeout | undefined;
      const flushed = Promise.race([
        writes.finally(() => clearTimeout(wait)),
        new Promise<void>((r) => (wait = setTimeout(r, FLUSH_WAIT_MS))),
      ]);
      void flushed.then(
        () => (err ? reject(err) : resolve(file!)),
        (e: unknown) => reject(err ?? (e instanceof QrvendError ? e : portLost(String(e)))),
      );
    };
    const apply = (effect: LinkEffect): void => {
      switch (effect.kind) {
        case 'send':
          writes = writes.then(async () => {
            if (effect.delayMs > 0) await new Promise((r) => setTimeout(r, effect.delayMs));
            await port.write(effect.bytes);
          });
          writes.catch((e: unknown) => finish(e instanceof QrvendError ? e : portLost(String(e))));
          break;
        case 'baud':
          writes = writes.then(() => port.setBaud(effect.rate));
          writes.catch((e: unknown) => finish(e instanceof QrvendError ? e : portLost(String(e))));
          log.debug({ baud: effect.rate }, 'dex: baud rate changed');
          break;
        case 'timer':
          clearTimeout(timer);
          timer = setTimeout(() => feed({ kind: 'timeout' }), effect.ms);
          break;
        case 'done':
          finish(null, effect.file);
          break;
        case 'fail':
          finish(new QrvendError(ErrorCodes[effect.code], effect.message, { hint: effect.hint }));
          break;
      }
    };
    const feed = (input: LinkInput): void => {
      if (ended) return;
      const step = machine.step(state, input);
      state = step.state;
      for (const effect of step.effects) apply(effect);
    };
    port.onData((chunk) => feed({ kind: 'bytes', bytes: chunk }));
    port.onLost((reason) => finish(portLost(reason)));
    feed({ kind: 'begin', now });
  });
}

function portLost(reason: string): QrvendError {
  return new QrvendError(ErrorCodes.DEX_PORT, `the DEX port failed during a read: ${reason}`, {
    hint: 'check the USB-RS232 adapter and its cable, then read again',
  });
}
