/**
 * Turning `start.listen` and the TLS files into something `listen()` and `https` take.
 */
import { readFileSync } from 'node:fs';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { refuseExposedSecret } from '../config/file-modes.js';
import { assertPem } from '../core/pem-file.js';

/** `127.0.0.1:8091` or `[::1]:8091` -> host and port (the config schema checked the shape). */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(listen);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (host === undefined || !Number.isInteger(port) || port > 65535) {
    throw new QrvendError(ErrorCodes.CONFIG_INVALID, `start.listen ${JSON.stringify(listen)} is not host:port`, {
      hint: 'write it like 127.0.0.1:8091 or [::1]:8091',
    });
  }
  return { host, port };
}

/** Reads the PEM certificate and key; an unreadable file is named, its content never shown. */
export function readTlsFiles(certFile: string, keyFile: string): { cert: Buffer; key: Buffer } {
  const read = (file: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException | null)?.code ?? 'unknown error';
      throw new QrvendError(ErrorCodes.CONFIG_UNREADABLE, `Start endpoint TLS ${what} ${file} cannot be read (${code})`, {
        hint: `check start.${what === 'certificate' ? 'certFile' : 'keyFile'} and that the qrvend user can read the file`,
        details: { file },
      });
    }
  };
  refuseExposedSecret(keyFile, 'Start endpoint TLS key', ErrorCodes.CONFIG_UNREADABLE, 'start.keyFile');
  const cert = read(certFile, 'certificate');
  assertPem(cert, 'certificates', 'start.certFile', certFile);
  const key = read(keyFile, 'key');
  assertPem(key, 'private key', 'start.keyFile', keyFile);
  return { cert, key };
}

export function listenError(listen: string, err: unknown): QrvendError {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const why =
    code === 'EADDRINUSE'
      ? 'the port is already in use'
      : code === 'EACCES'
        ? 'permission denied (ports below 1024 need privileges)'
        : code === 'EADDRNOTAVAIL'
          ? 'the address is not on this machine'
          : `listen failed (${code ?? String(err)})`;
  return new QrvendError(ErrorCodes.START_LISTEN_FAILED, `Start endpoint cannot listen on ${listen}: ${why}`, {
    hint: 'set start.listen to a free host:port of this machine, or stop the process that holds it',
    details: { listen, errno: code },
    cause: err,
  });
}
