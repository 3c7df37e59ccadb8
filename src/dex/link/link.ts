/**
 * openDexLink (index.ts): one read at a time, protocol detection and the port's life around
 * each read.
 */
import { ErrorCodes, QrvendError, isQrvendError } from '../../core/errors.js';
import { monotonicNow } from '../../core/clock.js';
import { ddcmp } from './ddcmp.js';
import { dexUcs } from './dex-ucs.js';
import { readFacts, writeFacts } from './facts.js';
import type { DexLink, DexLinkOptions, DexProtocol, DexRead } from './types.js';
import type { LinkMachine } from './machine.js';
import { openDexPort } from './port.js';
import { runSession } from './session.js';

const MACHINES: Record<DexProtocol, LinkMachine<unknown>> = {
  'dex-ucs': dexUcs as LinkMachine<unknown>,
  ddcmp: ddcmp as LinkMachine<unknown>,
};

export function openDexLink(options: DexLinkOptions): DexLink {
  const { port, protocol, factsPath, maxFileBytes, log } = options;
  let running: Promise<unknown> | null = null;

  const order = (): DexProtocol[] => {
    if (protocol !== 'auto') return [protocol];
    const known = readFacts(factsPath);
    return known?.port === port && known.protocol === 'ddcmp' ? ['ddcmp', 'dex-ucs'] : ['dex-ucs', 'ddcmp'];
  };

  const readWith = async (p: DexProtocol): Promise<Buffer> => {
    const machine = MACHINES[p];
    const dexPort = await openDexPort(port, machine.baudRate);
    try {
      return await runSession(machine, dexPort, maxFileBytes, log);
    } finally {
      await dexPort.close();
    }
  };

  const read = async (): Promise<DexRead> => {
    const started = monotonicNow();
    const tries = order();
    let lastError: unknown;
    for (const p of tries) {
      try {
        log.info({ port, protocol: p }, 'dex: read started');
        const bytes = await readWith(p);
        const durationMs = Math.round(monotonicNow() - started);
        if (protocol === 'auto' && readFacts(factsPath)?.protocol !== p) {
          writeFacts(factsPath, { protocol: p, port });
          log.info({ port, protocol: p }, 'dex: the VMC speaks this protocol; remembered');
        }
        log.info({ port, protocol: p, bytes: bytes.length, durationMs }, 'dex: read done');
        return { protocol: p, bytes, durationMs };
      } catch (err) {
        lastError = err;
        // Only silence means "try the other protocol"; any other failure came from a VMC that answered.
        if (!isQrvendError(err, ErrorCodes.DEX_NO_ANSWER)) throw err;
        log.info({ port, protocol: p }, 'dex: no answer in this protocol');
      }
    }
    if (tries.length > 1 && isQrvendError(lastError))
      throw new QrvendError(ErrorCodes.DEX_NO_ANSWER, `the VMC answered neither DEX/UCS nor DDCMP on ${port}`, {
        hint:
          'check the cable to the DEX jack (tip = VMC transmit, ring = VMC receive, sleeve = ' +
          'ground), that the VMC has DEX enabled, and that dex.port names the adapter',
        cause: lastError,
      });
    throw lastError;
  };

  return {
    read: () => {
      if (running)
        return Promise.reject(
          new QrvendError(ErrorCodes.DEX_BUSY, `a DEX read on ${port} is already under way`, {
            hint: 'wait for it to end (a read takes seconds to a minute) and ask again',
          }),
        );
      const p = read();
      running = p
        .finally(() => {
          running = null;
        })
        .catch(() => {});
      return p;
    },
    close: async () => {
      await running;
    },
  };
}
