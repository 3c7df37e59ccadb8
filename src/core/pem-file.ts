/**
 * Checks that a CA, certificate or private key file holds what TLS will need, so an empty or
 * damaged file is refused at start naming its config key, instead of every connection failing
 * later with an opaque TLS error (docs/decisions/smallest-boards.md item 6: a power cut after provisioning left
 * gateway.caFile empty; the agent started without a word). Uses node:crypto's own parsers, the
 * same OpenSSL that will load the file. Never puts the file's content in a message.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ErrorCodes, QrvendError } from './errors.js';

export type PemKind = 'certificates' | 'private key';

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

const REWRITE_HINT =
  'write the file again from the original, then run `sync` before the power may go (docs/install.md)';

/** Throws CONFIG_UNREADABLE (exit 78 at start) naming `key` and `file` when `content` is not a usable `kind`. */
export function assertPem(content: Buffer, kind: PemKind, key: string, file: string): void {
  const refuse = (why: string) =>
    new QrvendError(ErrorCodes.CONFIG_UNREADABLE, `${key} ${file} ${why}`, { hint: REWRITE_HINT, details: { file } });
  const text = content.toString('latin1');
  if (text.trim() === '') throw refuse(`is empty (${content.length} bytes)`);
  if (kind === 'private key') {
    try {
      createPrivateKey(content);
    } catch {
      // OpenSSL's reason is not shown: it could quote part of what it failed to parse.
      throw refuse('is not a PEM private key (damaged, or protected by a passphrase)');
    }
    return;
  }
  const blocks = text.match(CERT_BLOCK) ?? [];
  if (blocks.length === 0) throw refuse('holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  blocks.forEach((block, i) => {
    try {
      new X509Certificate(block);
    } catch {
      throw refuse(`certificate ${i + 1} of ${blocks.length} cannot be parsed (damaged)`);
    }
  });
}

/**
 * Reads the PEM file that config key `key` names and checks it (assertPem). A file that cannot be
 * read is CONFIG_UNREADABLE naming the key, the file and the errno, never its content.
 */
export function readPemFile(
  file: string,
  kind: PemKind,
  key: string,
  hint = `check ${key} and that the qrvend user can read the file`,
): Buffer {
  let content: Buffer;
  try {
    content = readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | null)?.code ?? 'unreadable';
    throw new QrvendError(ErrorCodes.CONFIG_UNREADABLE, `${key} ${file} cannot be read (${code})`, {
      hint,
      details: { file, errno: code },
      cause: err,
    });
  }
  assertPem(content, kind, key, file);
  return content;
}
