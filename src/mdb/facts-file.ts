/**
 * The daemon's VMC facts (src/mdb/vmc-watch.ts) as a file beside the ledger, so that `qrvend
 * doctor`, a separate process, can say which profile runs and what the VMC did that contradicts
 * it without opening the serial port the daemon holds.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { VmcFacts } from './vmc-watch.js';

export const FACTS_FILE = 'vmc-facts.json';
const MAX_BYTES = 64 * 1024;

export function vmcFactsPath(storePath: string): string {
  return join(dirname(storePath), FACTS_FILE);
}

/** The facts, or null when there is no file (no daemon ran here) or it is not what the daemon writes. */
export function readVmcFacts(path: string): VmcFacts | null {
  let text: string;
  try {
    const bytes = readFileSync(path);
    if (bytes.length > MAX_BYTES) return null;
    text = bytes.toString('utf8');
  } catch {
    return null;
  }
  try {
    const v = JSON.parse(text) as Partial<VmcFacts>;
    if (typeof v !== 'object' || v === null || typeof v.profile !== 'string' || !Array.isArray(v.contradictions))
      return null;
    return v as VmcFacts;
  } catch {
    return null;
  }
}
