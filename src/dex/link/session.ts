/**
 * Runs one protocol machine over an open port: feeds it the bytes and its timer, carries out its
 * effects, resolves with the file or rejects with a QrvendError. The work per received chunk is
 * one step of the machine, so a read never holds up the MDB loop sharing the main thread.
 */
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { LinkEffect, LinkInput, LinkMachine } from './machine.js';
import type { DexPort } from './port.js';

export function runSession<S>(machine: LinkMachine<S>, port: DexPort, maxFileBytes: number, log: Logger, now: Date = new Date()): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let state = machine.initial(maxFileBytes);
    let timer: NodeJS.Timeout | undefined;
    let writes: Promise<void> = Promise.resolve();
    let ended = false;

    const finish = (err: QrvendError | null, file?: Buffer): void => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      // Whatever was queued (an EOT, a last ACK) goes out before the caller closes the port.
      void writes.then(() => (err ? reject(err) : resolve(file!)), (e: unknown) => reject(e instanceof QrvendError ? e : portLost(String(e))));
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
