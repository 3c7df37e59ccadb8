/**
 * The files of `fleet.*` the MQTT client needs (CA, client certificate and key, broker password),
 * read by the fleet worker at connect and by `config.set` before it accepts a change (a trial
 * over a link that cannot log in would never be confirmed). An unreadable file is named by its
 * key and path, its content never shown.
 */
import { readFileSync } from 'node:fs';
import type { QrvendConfig } from './schema.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { readPemFile } from '../core/pem-file.js';

export interface FleetCredentials {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  password?: string;
}

function read(file: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new QrvendError(ErrorCodes.CONFIG_UNREADABLE, `${key} ${file} cannot be read (${code})`, {
      hint: `check ${key} and that the qrvend user can read the file`,
      details: { file, errno: code },
    });
  }
}

/** The PEM files alone, each checked for content (an empty CA after a power cut is refused at start). */
export function readFleetTlsFiles(fleet: QrvendConfig['fleet']): Pick<FleetCredentials, 'ca' | 'cert' | 'key'> {
  const out: Pick<FleetCredentials, 'ca' | 'cert' | 'key'> = {};
  if (fleet.caFile !== null) out.ca = readPemFile(fleet.caFile, 'certificates', 'fleet.caFile');
  if (fleet.certFile !== null && fleet.keyFile !== null) {
    out.cert = readPemFile(fleet.certFile, 'certificates', 'fleet.certFile');
    out.key = readPemFile(fleet.keyFile, 'private key', 'fleet.keyFile');
  }
  return out;
}

export function readFleetCredentials(fleet: QrvendConfig['fleet']): FleetCredentials {
  const out: FleetCredentials = {};
  Object.assign(out, readFleetTlsFiles(fleet));
  if (fleet.passwordFile !== null)
    out.password = read(fleet.passwordFile, 'fleet.passwordFile')
      .toString('utf8')
      .replace(/\r?\n$/, '');
  return out;
}
