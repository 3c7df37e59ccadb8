/**
 * The protocol a VMC answered in, remembered beside the ledger so the next read starts with it
 * (a DDCMP machine would otherwise sit through three DEX/UCS ENQs at every read). A missing,
 * damaged or foreign file means "not known yet": detection runs again and rewrites it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../../core/durable-file.js';
import type { DexProtocol } from './types.js';

const MAX_FACTS_BYTES = 4096;

export interface DexFacts {
  protocol: DexProtocol;
  /** The device it was learnt on: a different dex.port is a different VMC until it answers. */
  port: string;
}

export function readFacts(path: string): DexFacts | null {
  try {
    const fd = openSync(path, 'r');
    // At most this much is read: a longer file (not one we wrote) is cut and fails to parse.
    const buf = Buffer.alloc(MAX_FACTS_BYTES);
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, 0);
    } finally {
      closeSync(fd);
    }
    const text = buf.toString('utf8', 0, n);
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { protocol, port } = parsed as Record<string, unknown>;
    if ((protocol !== 'dex-ucs' && protocol !== 'ddcmp') || typeof port !== 'string') return null;
    return { protocol, port };
  } catch {
    return null;
  }
}

export function writeFacts(path: string, facts: DexFacts): void {
  writeFileAtomic(path, `${JSON.stringify(facts)}\n`, 0o640);
}

/** Where the daemon and `qrvend dex read` keep the facts: beside the ledger (store.path). */
export function dexFactsPathFor(storePath: string): string {
  return join(dirname(storePath), 'dex-facts.json');
}
