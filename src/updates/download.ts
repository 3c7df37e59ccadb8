/**
 * Fetching an update's artifact (docs/decisions/remote-updates.md): HTTPS with the gateway's TLS rules (system
 * CAs, or updates.caFile for a private repository; plain http only to a loopback host), into
 * `<dir>/artifact.part`, resumed with an HTTP Range request after a cut. A server that ignores
 * Range (200 instead of 206) is read from the start again. Bytes are hashed as they arrive; at a
 * resume what is on disk is hashed again (a hash state cannot be kept across a restart). Every byte
 * received counts against the data cap, across retries and restarts: the caller keeps the count
 * durably (onFetched). The finished file is renamed to `artifact.tar.gz` only once its size and
 * sha256 match the manifest.
 *
 * Runs in the fleet worker, never on the machine loop.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { QrvendError } from '../core/errors.js';
import { fsyncDir, removeDurably, renameDurably } from '../core/durable-file.js';
import { readPemFile } from '../core/pem-file.js';
import type { UpdateManifest } from '../fleet/contract/manifest-schema.js';
import { checkDownloadUrl, failed, fetchOnce, type Part } from './artifact-request.js';
import { hashFd, verifyArtifactFile } from './manifest.js';

export { checkDownloadUrl };

export const PART_FILE = 'artifact.part';
export const ARTIFACT_FILE = 'artifact.tar.gz';

export interface DownloadOptions {
  url: string;
  manifest: Pick<UpdateManifest, 'size' | 'sha256' | 'artifact'>;
  /** `<updates.dir>/downloads/<version>`. */
  dir: string;
  caFile: string | null;
  /** updates.maxDownloadBytes. */
  maxBytes: number;
  /** Bytes already received for this update before this call (restarts included). */
  fetchedBefore: number;
  /** Told the running total of bytes received; the caller persists it (at most every few MB). */
  onFetched(total: number): void;
  /** Told the bytes on disk, at most every progressEveryMs. */
  onProgress(bytes: number, size: number): void;
  progressEveryMs?: number;
  /** No byte for this long ends the request (a cut); the next attempt resumes. */
  idleTimeoutMs?: number;
  /** One request may last this long at most. */
  requestTimeoutMs?: number;
  /** Attempts in a row that make no progress before giving up. */
  maxStalledAttempts?: number;
  /** Waits between attempts (tests pass 0); grows with the stalled count. */
  retryDelayMs?: number;
  monotonicNow(): number;
  signal?: AbortSignal;
}

/** Redirects followed for one request; every attempt starts again from the offered URL (signed links expire). */
const MAX_REDIRECTS = 3;

/** Opens the part file and hashes what is on disk (bounded by the artifact's size). */
function openPart(path: string, size: number): Part {
  const fd = openSync(path, existsSync(path) ? 'r+' : 'w+', 0o640);
  let have = fstatSync(fd).size;
  if (have > size) {
    ftruncateSync(fd, 0);
    have = 0;
  }
  const hash = createHash('sha256');
  hashFd(fd, hash, have);
  return { fd, have, hash };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (ms <= 0) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** Fetches and checks the artifact; resolves with its path (`<dir>/artifact.tar.gz`). */
export async function downloadArtifact(o: DownloadOptions): Promise<string> {
  const url = checkDownloadUrl(o.url);
  const ca =
    o.caFile === null
      ? undefined
      : readPemFile(
          o.caFile,
          'certificates',
          'updates.caFile',
          'point updates.caFile at a readable PEM file, or null for the system CAs',
        );
  mkdirSync(o.dir, { recursive: true, mode: 0o750 });
  const artifact = join(o.dir, ARTIFACT_FILE);
  if (existsSync(artifact)) {
    try {
      verifyArtifactFile(artifact, o.manifest);
      return artifact;
    } catch {
      removeDurably(artifact);
    }
  }
  const partPath = join(o.dir, PART_FILE);
  const part = openPart(partPath, o.manifest.size);
  fsyncDir(o.dir);
  const counter = { fetched: o.fetchedBefore, sinceSync: 0, lastProgress: o.monotonicNow() };
  let stalled = 0;
  try {
    while (part.have < o.manifest.size) {
      if (counter.fetched >= o.maxBytes) {
        throw new QrvendError(
          'UPDATE_DATA_CAP',
          `the download reached the data cap: ${counter.fetched} bytes ` +
            `received for this update, updates.maxDownloadBytes is ${o.maxBytes}`,
          { hint: 'raise updates.maxDownloadBytes or offer the update again later' },
        );
      }
      if (o.signal?.aborted) throw failed('the download was stopped');
      const before = counter.fetched;
      let target: URL | null = url;
      for (let hops = 0; target !== null; hops += 1) {
        if (hops > MAX_REDIRECTS)
          throw failed(
            `the artifact server redirected more than ${MAX_REDIRECTS} times`,
            'give the final URL of the artifact',
          );
        target = await fetchOnce(target, ca, part, o, counter);
      }
      fsyncSync(part.fd);
      o.onFetched(counter.fetched);
      if (counter.fetched > before) stalled = 0;
      else if (++stalled >= (o.maxStalledAttempts ?? 5))
        throw failed(
          `the artifact server sent nothing in ${stalled} attempts in a row`,
          'check that the server is reachable and serves the artifact',
        );
      if (part.have < o.manifest.size) await sleep((o.retryDelayMs ?? 5_000) * Math.min(stalled + 1, 12), o.signal);
    }
    o.onProgress(part.have, o.manifest.size);
    const digest = part.hash.digest('hex');
    if (digest !== o.manifest.sha256) {
      closeSync(part.fd);
      part.fd = -1;
      removeDurably(partPath);
      throw new QrvendError(
        'UPDATE_ARTIFACT_MISMATCH',
        `the downloaded artifact's sha256 is ${digest}, the signed manifest says ${o.manifest.sha256}`,
        {
          hint: 'the server serves an altered or damaged file: nothing is activated; publish the signed release again',
        },
      );
    }
  } finally {
    if (part.fd >= 0) closeSync(part.fd);
  }
  renameDurably(partPath, artifact);
  // Hashed as it arrived; checked once more on disk, as the activator will.
  verifyArtifactFile(artifact, o.manifest);
  return artifact;
}
