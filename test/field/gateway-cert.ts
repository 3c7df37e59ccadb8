/**
 * The gateway simulator's certificate for the field test: self-signed for the address the guest
 * dials (the guestfwd address), made with the host's openssl into the run directory. The agent
 * in the guest trusts it through `gateway.caFile`, as a site with a private CA would.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export function makeGatewayCert(dir: string, ip: string): { cert: Buffer; key: Buffer } {
  const certFile = join(dir, 'gateway-cert.pem');
  const keyFile = join(dir, 'gateway-key.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', `/CN=${ip}`,
    '-addext', `subjectAltName=IP:${ip}`,
  ], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
  return { cert: readFileSync(certFile), key: readFileSync(keyFile) };
}
