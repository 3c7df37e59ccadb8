/**
 * What the daemon's GPIO did, as a file beside the ledger, so that `qrvend doctor` (a separate
 * process that cannot see the daemon's memory) can show the backend and the board resets.
 * Written when the GPIO opens and after each reset pulse: rarely, on libuv's thread pool.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomicAsync } from '../../core/durable-file.js';

export const GPIO_FACTS_FILE = 'gpio-facts.json';
const MAX_BYTES = 4 * 1024;

export interface GpioFacts {
  backend: string;
  chip: string | null;
  boardResets: number;
  /** Wall-clock time of the last pulse (ISO), null before the first. */
  lastResetAt: string | null;
  pid: number;
}

export function gpioFactsPath(storePath: string): string {
  return join(dirname(storePath), GPIO_FACTS_FILE);
}

export function writeGpioFacts(path: string, facts: GpioFacts): Promise<void> {
  return writeFileAtomicAsync(path, `${JSON.stringify(facts, null, 2)}\n`, 0o644);
}

/** The facts, or null when there is no file or it is not what the daemon writes. */
export function readGpioFacts(path: string): GpioFacts | null {
  try {
    const bytes = readFileSync(path);
    if (bytes.length > MAX_BYTES) return null;
    const v = JSON.parse(bytes.toString('utf8')) as Partial<GpioFacts>;
    if (typeof v !== 'object' || v === null) return null;
    if (typeof v.backend !== 'string' || typeof v.boardResets !== 'number') return null;
    return v as GpioFacts;
  } catch {
    return null;
  }
}
