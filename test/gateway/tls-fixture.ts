/** A throwaway self-signed certificate for 127.0.0.1, made with openssl in a temp dir. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsFixture {
  dir: string;
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
  cleanup(): void;
}

/** null when openssl is not installed (the caller skips its HTTPS test). */
export function makeSelfSignedCert(): TlsFixture | null {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore', timeout: 20_000 },
    );
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  return {
    dir,
    certFile,
    keyFile,
    cert: readFileSync(certFile),
    key: readFileSync(keyFile),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
