/**
 * Sorting SQLite failures into the two kinds the ledger reacts to differently: a damaged file
 * (moved aside and replaced at start) and storage that cannot take writes (the connection is
 * closed and reopened, and new sessions are refused until a write succeeds again).
 */

function codeOf(err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'string') {
    return (err as { code: string }).code;
  }
  return '';
}

/** The file is not a database, or its pages contradict each other. */
export function isCorruption(err: unknown): boolean {
  const code = codeOf(err);
  return code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB';
}

/**
 * The disk (or the file system, or the file's permissions) refused a read, write or sync. After
 * one of these SQLite may not know what reached the platter, so the connection is not trusted.
 */
export function isStorageFailure(err: unknown): boolean {
  const code = codeOf(err);
  return (
    code.startsWith('SQLITE_IOERR') ||
    code.startsWith('SQLITE_FULL') ||
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code === 'SQLITE_PROTOCOL' ||
    // Node's own file-system errors while preparing the directory or moving files aside.
    ['EIO', 'ENOSPC', 'EROFS', 'EACCES', 'EPERM', 'EDQUOT'].includes(code)
  );
}

export function describeError(err: unknown): string {
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  return code ? `${code}: ${message}` : message;
}
