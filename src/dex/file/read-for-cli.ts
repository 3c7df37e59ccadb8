/**
 * Reads an audit file named on the command line, bounded: the largest file dex.maxFileBytes can
 * allow. A bigger file is refused before it is read whole, with what to do.
 */
import { openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { ErrorCodes, QrvendError } from '../../core/errors.js';

export const MAX_AUDIT_FILE_BYTES = 4 * 1024 * 1024;

export function readAuditFileForCli(path: string): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, `cannot open the audit file ${JSON.stringify(path)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
      hint: 'give the path of a file written by `qrvend dex read --out` or a handheld',
    });
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_AUDIT_FILE_BYTES) {
      throw new QrvendError(ErrorCodes.CLI_USAGE, `the audit file is ${size} bytes, more than the ${MAX_AUDIT_FILE_BYTES} an audit can be`, { hint: 'check that this is an EVA-DTS audit file' });
    }
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const n = readSync(fd, buf, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}
