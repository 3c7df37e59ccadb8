/**
 * Turning `start.listen` and the TLS files into something `listen()` and `https` take.
 */
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { refuseExposedSecret } from '../config/file-modes.js';
import { readPemFile } from '../core/pem-file.js';

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
  refuseExposedSecret(keyFile, 'Start endpoint TLS key', ErrorCodes.CONFIG_UNREADABLE, 'start.keyFile');
  return {
    cert: readPemFile(certFile, 'certificates', 'start.certFile'),
    key: readPemFile(keyFile, 'private key', 'start.keyFile'),
  };
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
