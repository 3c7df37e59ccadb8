/**
 * Self-signed server certificates for the field test, made with the host's openssl into the run
 * directory: the gateway simulator's for the address the guest dials (the guestfwd address), and
 * the fleet broker's (the guest's address and 127.0.0.1, where the host's operator reaches it).
 * The agent in the guest trusts each through its caFile, as a site with a private CA would.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ServerCert {
  cert: Buffer;
  key: Buffer;
  certFile: string;
}

/**
 * `name` prefixes the files (`<name>-cert.pem`, `<name>-key.pem`); `ips` are the subjectAltNames, the first one the CN.
 */
export function makeServerCert(dir: string, name: string, ips: readonly string[]): ServerCert {
  const certFile = join(dir, `${name}-cert.pem`);
  const keyFile = join(dir, `${name}-key.pem`);
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
      '2',
      '-subj',
      `/CN=${ips[0]}`,
      '-addext',
      `subjectAltName=${ips.map((ip) => `IP:${ip}`).join(',')}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 },
  );
  return { cert: readFileSync(certFile), key: readFileSync(keyFile), certFile };
}

export function makeGatewayCert(dir: string, ip: string): { cert: Buffer; key: Buffer } {
  const { cert, key } = makeServerCert(dir, 'gateway', [ip]);
  return { cert, key };
}
