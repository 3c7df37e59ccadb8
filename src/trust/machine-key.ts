/**
 * The machine's own signing key (`fleet.machineKeyFile`, made by `qrvend fleet keygen --machine`):
 * an Ed25519 private key in PKCS#8 PEM that never leaves the machine. With it the machine signs
 * what the relay acts on (machine-sig.ts). Whoever reads it can speak for the machine, so it is
 * refused at start unless it is a regular file (not a symlink), owned by the agent's own user and
 * readable by nobody else (mode 0600 or 0400), in a directory only root or that user may write
 * (whoever may write the directory may swap the file: a rename there ignores the file's own mode).
 * Its id is derived from its public half, so the
 * registry entry printed by keygen and the id the machine signs with always agree.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { lstatSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { generateSigningKey, loadPrivateKey, rawPublicKey, TrustFileError } from './key-material.js';

const MAX_KEY_FILE_BYTES = 16 * 1024;

export interface MachineKey {
  keyId: string;
  key: KeyObject;
  /** base64 of the raw 32-byte public key: the registry's machineKeys[].publicKey. */
  publicKey: string;
}

/** `m-` and 16 base64url characters of the SHA-256 of the raw public key (96 bits: no two machines share one). */
export function machineKeyId(publicKeyBase64: string): string {
  return `m-${createHash('sha256').update(Buffer.from(publicKeyBase64, 'base64')).digest('base64url').slice(0, 16)}`;
}

/** Reads and checks the machine key; the error names the file and what is wrong, never its content. */
export function loadMachineKey(path: string, euid: number | undefined = process.geteuid?.()): MachineKey {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const make = 'make one with qrvend fleet keygen --machine';
    throw new TrustFileError(`the machine key ${path} cannot be read (${code}): ${make}`);
  }
  if (st.isSymbolicLink()) throw new TrustFileError(`the machine key ${path} is a symbolic link: name the file itself`);
  if (!st.isFile()) throw new TrustFileError(`the machine key ${path} is not a regular file`);
  if (st.size > MAX_KEY_FILE_BYTES) {
    throw new TrustFileError(`the machine key ${path} is ${st.size} bytes, more than ${MAX_KEY_FILE_BYTES}`);
  }
  if ((st.mode & 0o077) !== 0) {
    const mode = `0${(st.mode & 0o777).toString(8)}`;
    throw new TrustFileError(`the machine key ${path} has mode ${mode}: group or others may use it; chmod 0600 it`);
  }
  if (euid !== undefined && st.uid !== euid) {
    const owners = `owned by uid ${st.uid}, not by the agent's user (uid ${euid})`;
    throw new TrustFileError(`the machine key ${path} is ${owners}: chown it to the agent's user`);
  }
  const folder = directoryProblem(path, euid);
  if (folder !== null) throw new TrustFileError(folder);
  const key = loadPrivateKey(path);
  const publicKey = rawPublicKey(createPublicKey(key));
  return { keyId: machineKeyId(publicKey), key, publicKey };
}

/** Why the machine key's directory lets someone other than root or the agent's user replace the key, or null. */
function directoryProblem(path: string, euid: number | undefined): string | null {
  const dir = dirname(resolve(path));
  let st;
  try {
    st = statSync(dir);
  } catch (err) {
    return `the machine key's directory ${dir} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if ((st.mode & 0o022) !== 0) {
    const mode = `0${(st.mode & 0o7777).toString(8)}`;
    return (
      `the machine key ${path} is inside ${dir} (mode ${mode}), which group or others may write (anyone there ` +
      "can swap the key): move it to a directory only root or the agent's user writes, e.g. /var/lib/qrvend"
    );
  }
  if (st.uid !== 0 && euid !== undefined && st.uid !== euid) {
    return (
      `the machine key ${path} is inside ${dir}, owned by uid ${st.uid}, not by root or the agent's user ` +
      `(uid ${euid}): chown root ${dir}`
    );
  }
  return null;
}

/** A new machine key: the PEM for the machine and the registry entry's `machineKeys` item. */
export function generateMachineKey(): { privatePem: string; entry: { id: string; publicKey: string } } {
  const key = generateSigningKey();
  return { privatePem: key.privatePem, entry: { id: machineKeyId(key.publicKey), publicKey: key.publicKey } };
}
