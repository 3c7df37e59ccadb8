/**
 * The fail-io shim's tally (test/native/fail-io.c, QRVEND_FAILIO_TALLY): one line per write or
 * sync call on a file under the watched directory. The SD-card wear figure reads it for the
 * number of fsyncs per sale and for where the bytes go (ledger file, its -wal, anything else).
 */
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The shim as native/build.mjs builds it (dist/test/native/). */
export const FAIL_IO_SHIM = fileURLToPath(new URL('../../test/native/libqrvend-failio.so', import.meta.url));

export interface IoTally {
  /** fsync + fdatasync calls. */
  syncs: number;
  writes: number;
  /** Bytes handed to write/pwrite, by file name (ledger.sqlite, ledger.sqlite-wal...). */
  bytesByFile: Record<string, number>;
  syncsByFile: Record<string, number>;
}

/** Parses tally lines ("W <bytes> <path>" / "S 0 <path>"); a torn or foreign line is skipped. */
export function parseTally(text: string): IoTally {
  const out: IoTally = { syncs: 0, writes: 0, bytesByFile: {}, syncsByFile: {} };
  for (const line of text.split('\n')) {
    const m = /^([WS]) (\d+) (\/.*)$/.exec(line);
    if (m === null) continue;
    const file = basename(m[3]!);
    if (m[1] === 'S') {
      out.syncs += 1;
      out.syncsByFile[file] = (out.syncsByFile[file] ?? 0) + 1;
    } else {
      out.writes += 1;
      out.bytesByFile[file] = (out.bytesByFile[file] ?? 0) + Number(m[2]);
    }
  }
  return out;
}
