/**
 * The gateway's CA file (gateway.caFile), read the way the client reads it. Apart from the client
 * so that the daemon's start checks (src/doctor/start-checks.ts, main thread) can refuse a bad file
 * without loading got and the gateway protocol there: the main thread stays small
 * (docs/decisions/targets.md, resident memory; BENCHMARKS.md).
 */
import { readPemFile } from '../core/pem-file.js';

export function readCa(caFile: string): Buffer {
  return readPemFile(
    caFile,
    'certificates',
    'gateway.caFile',
    'point gateway.caFile at a readable PEM file, or set it to null to use the system CAs',
  );
}
