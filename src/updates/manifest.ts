/**
 * Signing and checking an update manifest (docs/decisions/remote-updates.md; the schema is manifest-schema.ts).
 * The checks run in this order, each refusal a QrvendError with its own code: the shape, the
 * signature (a key of scope `update` from the trust file, within its window: the manifest's
 * expiry), the architecture, the version against the running one (no downgrade, no re-install of
 * the same), the running version against minVersion. The artifact is checked apart
 * (verifyArtifactFile), once its bytes are on disk.
 */
import { createHash, type Hash, type KeyObject } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { QrvendError } from '../core/errors.js';
import type { Keyring } from '../trust/keys.js';
import { MAX_DOCUMENT_LIFETIME_MS, signStatement, verifyStatement } from '../trust/signed.js';
import {
  MAX_MANIFEST_BYTES,
  UPDATE_MANIFEST_KIND,
  UpdateManifest,
  UpdateManifestBody,
  type UpdateArch,
} from '../fleet/contract/manifest-schema.js';
import { compareVersions, isReleaseVersion } from './version-order.js';

/**
 * This machine's architecture by its Debian name (what a manifest's `arch`
 * says), or null for one no release is built for.
 */
export function machineArch(nodeArch: string = process.arch): UpdateArch | null {
  switch (nodeArch) {
    case 'arm64':
      return 'arm64';
    case 'arm':
      return 'armhf';
    case 'x64':
      return 'amd64';
    default:
      return null;
  }
}

export interface SignManifestOptions {
  keyId: string;
  key: KeyObject;
  nowMs: number;
  /** How long the manifest may be offered; at most MAX_DOCUMENT_LIFETIME_MS. */
  lifetimeMs: number;
}

export function signManifest(body: UpdateManifestBody, options: SignManifestOptions): UpdateManifest {
  const checked = UpdateManifestBody.parse(body);
  const signature = signStatement(UPDATE_MANIFEST_KIND, checked, {
    ...options,
    maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS,
  });
  return { ...checked, signature };
}

export interface ManifestCheck {
  /** As received (parsed JSON, or the offer's member). */
  manifest: unknown;
  /** null: no trust file; every manifest is refused. */
  keyring: Keyring | null;
  nowMs: number;
  /** The version running here (or installed, for `qrvend update verify --installed`). */
  running: string;
  arch: UpdateArch | null;
}

function firstIssue(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  const issue = error.issues[0];
  return `${issue?.path.map(String).join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`;
}

/** The manifest, checked; a QrvendError naming what was wrong otherwise. */
export function verifyManifest(input: ManifestCheck): UpdateManifest {
  const parsed = UpdateManifest.safeParse(input.manifest);
  if (!parsed.success) {
    const unsigned = typeof input.manifest === 'object' && input.manifest !== null && !('signature' in input.manifest);
    if (unsigned)
      throw new QrvendError('UPDATE_SIGNATURE_REFUSED', 'the update manifest is unsigned', {
        hint: 'sign it with an update key: npm run release -- --sign KEY --key-id ID',
      });
    throw new QrvendError('UPDATE_MANIFEST_INVALID', `the update manifest is malformed (${firstIssue(parsed.error)})`, {
      hint: 'use the manifest file npm run release wrote, unchanged',
    });
  }
  const manifest = parsed.data;
  const { signature, ...body } = manifest;
  const checked = verifyStatement({
    kind: UPDATE_MANIFEST_KIND,
    body,
    signature,
    scope: 'update',
    keyring: input.keyring,
    nowMs: input.nowMs,
    maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS,
  });
  if (!checked.ok) {
    throw new QrvendError(
      'UPDATE_SIGNATURE_REFUSED',
      `the update manifest's signature is refused (${checked.reason}): ${checked.message}`,
      {
        hint:
          checked.reason === 'expired'
            ? 'sign the release again with a later expiry'
            : "sign with a key of scope update that this machine's trust file (fleet.trustFile) holds",
        details: { reason: checked.reason },
      },
    );
  }
  if (input.arch === null || manifest.arch !== input.arch) {
    throw new QrvendError(
      'UPDATE_WRONG_ARCH',
      `the update is built for ${manifest.arch}, this machine is ` +
        `${input.arch ?? `${process.arch} (no release is built for it)`}`,
      {
        hint: `offer the ${input.arch ?? ''} manifest of the same release`.replace('  ', ' '),
      },
    );
  }
  if (!isReleaseVersion(input.running)) {
    throw new QrvendError(
      'UPDATE_MANIFEST_INVALID',
      `the running version ${JSON.stringify(input.running.slice(0, 64))} is not ` +
        `a release version: its order against ${manifest.version} is unknown`,
      { hint: 'install a release build by hand' },
    );
  }
  if (compareVersions(manifest.version, input.running) <= 0) {
    throw new QrvendError(
      'UPDATE_DOWNGRADE',
      `the update's version ${manifest.version} is not newer than the running ${input.running}`,
      {
        hint: 'a machine only moves forward; to undo a release, publish a newer one that fixes it',
      },
    );
  }
  if (compareVersions(input.running, manifest.minVersion) < 0) {
    throw new QrvendError(
      'UPDATE_TOO_OLD',
      `the update to ${manifest.version} applies from ${manifest.minVersion} on; this machine runs ${input.running}`,
      {
        hint: `update it to ${manifest.minVersion} or later first`,
      },
    );
  }
  return manifest;
}

const CHUNK = 1024 * 1024;

/**
 * Feeds the first `end` bytes of the open file `fd` to `hash` in chunks;
 * returns how many were read (fewer at end of file).
 */
export function hashFd(fd: number, hash: Hash, end: number): number {
  const buf = Buffer.allocUnsafe(CHUNK);
  let at = 0;
  while (at < end) {
    const n = readSync(fd, buf, 0, Math.min(CHUNK, end - at), at);
    if (n === 0) break;
    hash.update(buf.subarray(0, n));
    at += n;
  }
  return at;
}

/** sha256 (hex) and size of a file, read in chunks (an artifact is tens of MB). */
export function hashFile(path: string, limitBytes = Number.MAX_SAFE_INTEGER): { size: number; sha256: string } {
  const fd = openSync(path, 'r');
  try {
    const hash = createHash('sha256');
    const size = hashFd(fd, hash, Math.min(fstatSync(fd).size, limitBytes));
    return { size, sha256: hash.digest('hex') };
  } finally {
    closeSync(fd);
  }
}

/** The artifact on disk is the one the manifest names: its size, then its sha256. */
export function verifyArtifactFile(path: string, manifest: Pick<UpdateManifest, 'size' | 'sha256' | 'artifact'>): void {
  let size: number;
  try {
    const fd = openSync(path, 'r');
    size = fstatSync(fd).size;
    closeSync(fd);
  } catch (err) {
    throw new QrvendError(
      'UPDATE_ARTIFACT_MISMATCH',
      `the artifact ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (size !== manifest.size) {
    throw new QrvendError(
      'UPDATE_ARTIFACT_MISMATCH',
      `the artifact is ${size} bytes, the manifest says ${manifest.size}`,
      { hint: `fetch ${manifest.artifact} again; it is truncated or another file` },
    );
  }
  const { sha256 } = hashFile(path);
  if (sha256 !== manifest.sha256) {
    throw new QrvendError(
      'UPDATE_ARTIFACT_MISMATCH',
      `the artifact's sha256 is ${sha256}, the manifest says ${manifest.sha256}`,
      { hint: 'the file was altered or damaged: it is not the signed release' },
    );
  }
}

/** Reads a manifest file as JSON, refusing one larger than MAX_MANIFEST_BYTES (it is hostile until checked). */
export function readManifestFile(path: string): unknown {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new QrvendError(
      'UPDATE_MANIFEST_INVALID',
      `the manifest ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_MANIFEST_BYTES)
      throw new QrvendError(
        'UPDATE_MANIFEST_INVALID',
        `the manifest ${path} is ${size} bytes, more than ${MAX_MANIFEST_BYTES}: not a manifest`,
      );
    const buf = Buffer.alloc(size);
    readSync(fd, buf, 0, size, 0);
    try {
      return JSON.parse(buf.toString('utf8'));
    } catch {
      throw new QrvendError('UPDATE_MANIFEST_INVALID', `the manifest ${path} is not valid JSON`);
    }
  } finally {
    closeSync(fd);
  }
}
