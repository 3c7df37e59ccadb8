/**
 * Reads an audit file named on the command line, bounded: the largest file dex.maxFileBytes can
 * allow. A bigger file is refused before it is read whole, with what to do; so is anything that is
 * not a regular file (a directory, a device that would never end).
 */
import { openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { ErrorCodes, QrvendError } from '../../core/errors.js';

export const MAX_AUDIT_FILE_BYTES = 4 * 1024 * 1024;

const WHICH_FILE = 'give the path of a file written by `qrvend dex read --out` or a handheld';

function unreadable(path: string, why: string): QrvendError {
  const message = `cannot open the audit file ${JSON.stringify(path)}: ${why}`;
  return new QrvendError(ErrorCodes.DEX_FILE_UNREADABLE, message, { hint: WHICH_FILE });
}

const errnoOf = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

export function readAuditFileForCli(path: string): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw unreadable(path, errnoOf(err));
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw unreadable(path, stat.isDirectory() ? 'a directory' : 'not a regular file');
    const size = stat.size;
    if (size > MAX_AUDIT_FILE_BYTES) {
      const message = `the audit file is ${size} bytes, more than the ${MAX_AUDIT_FILE_BYTES} an audit can be`;
      throw new QrvendError(ErrorCodes.DEX_TOO_LARGE, message, { hint: 'check that this is an EVA-DTS audit file' });
    }
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      let n: number;
      try {
        n = readSync(fd, buf, got, size - got, got);
      } catch (err) {
        throw unreadable(path, errnoOf(err));
      }
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}
