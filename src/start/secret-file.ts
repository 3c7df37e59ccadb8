/**
 * Reading the Start SecretToken from `start.secretTokenFile`.
 *
 * The token lives in its own file (mode 600, owned by the service user) so that it is never in
 * the configuration, the environment or a process listing. Every error names the file and the
 * problem, never the content: a technician reading the journal must not learn the token.
 */
import { readFileSync, statSync } from 'node:fs';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { refuseExposedSecret } from '../config/file-modes.js';

/** The seed fixes the SecretToken at exactly 64 characters. */
export const SECRET_TOKEN_LENGTH = 64;

const FIX_HINT =
  'put the 64-character SecretToken from the payment provider alone in this file (one line, ' +
  'chmod 600, owned by the qrvend user), or point start.secretTokenFile at the right file';

function unreadable(file: string, problem: string, cause?: unknown): QrvendError {
  return new QrvendError(ErrorCodes.SECRET_UNREADABLE, `Start SecretToken file ${file}: ${problem}`, {
    hint: FIX_HINT,
    details: { file },
    // An fs error names the path and the errno, never file content, so it is safe to keep.
    cause,
  });
}

function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case 'ENOENT':
      return 'file not found';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied (the qrvend user must be able to read it)';
    case 'EISDIR':
      return 'is a directory, not a file';
    default:
      return `cannot be read (${code ?? 'unknown error'})`;
  }
}

/**
 * Reads, trims and checks the token. Returns its bytes; throws QrvendError SECRET_UNREADABLE
 * when the file is missing, unreadable, or does not hold exactly one 64-character printable
 * ASCII token. The messages give lengths and reasons only, never characters of the content.
 */
export function readSecretToken(file: string): Buffer {
  let raw: Buffer;
  try {
    if (statSync(file).isDirectory()) throw unreadable(file, 'is a directory, not a file');
    refuseExposedSecret(file, 'Start SecretToken file', ErrorCodes.SECRET_UNREADABLE, 'start.secretTokenFile');
    raw = readFileSync(file);
  } catch (err) {
    if (err instanceof QrvendError) throw err;
    throw unreadable(file, describeFsError(err), err);
  }
  // trim() also drops a byte-order mark (an editor's habit), as well as spaces and the newline.
  const text = raw.toString('utf8').trim();
  if (text.length === 0) throw unreadable(file, 'is empty');
  // Printable ASCII only: a second word or line, or a control character, would make every Start
  // fail authentication with no visible reason.
  if (!/^[\x21-\x7e]*$/.test(text)) {
    throw unreadable(
      file,
      /\s/.test(text)
        ? 'holds more than one word or line; it must hold the token alone'
        : 'holds characters outside printable ASCII (check the encoding)',
    );
  }
  if (text.length !== SECRET_TOKEN_LENGTH) {
    throw unreadable(file, `holds ${text.length} characters after trimming, expected exactly ${SECRET_TOKEN_LENGTH}`);
  }
  return Buffer.from(text, 'ascii');
}
