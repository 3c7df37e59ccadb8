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
import { createHash, type Hash } from 'node:crypto';
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { isQrvendError, QrvendError } from '../core/errors.js';
import { fsyncDir, removeDurably, renameDurably } from '../core/durable-file.js';
import { isLoopbackHost } from '../config/schema.js';
import { readPemFile } from '../core/pem-file.js';
import type { UpdateManifest } from '../fleet/contract/manifest-schema.js';
import { hashFd, verifyArtifactFile } from './manifest.js';

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

const FSYNC_EVERY_BYTES = 4 * 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Redirects followed for one request; every attempt starts again from the offered URL (signed links expire). */
const MAX_REDIRECTS = 3;

function failed(message: string, hint?: string): QrvendError {
  return new QrvendError('UPDATE_DOWNLOAD_FAILED', message, hint === undefined ? {} : { hint });
}

/** The URL, checked: https, or http to a loopback host; no credentials in it (they would reach logs). */
export function checkDownloadUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new QrvendError('UPDATE_MANIFEST_INVALID', 'the update URL is not a URL');
  }
  if (parsed.username !== '' || parsed.password !== '')
    throw new QrvendError(
      'UPDATE_MANIFEST_INVALID',
      'the update URL carries credentials: use a URL without user:password@',
    );
  if (parsed.protocol === 'https:') return parsed;
  if (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname)) return parsed;
  throw new QrvendError(
    'UPDATE_MANIFEST_INVALID',
    `the update URL must be https:// (plain http only to a loopback ` +
      `host), not ${parsed.protocol}//${parsed.hostname.slice(0, 100)}`,
  );
}

interface Part {
  fd: number;
  have: number;
  hash: Hash;
}

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

function restartPart(part: Part): void {
  ftruncateSync(part.fd, 0);
  part.have = 0;
  part.hash = createHash('sha256');
}

/**
 * One GET from `part.have` on; resolves when the response ended or was cut (the caller looks at
 * part.have), or with the target of a redirect.
 */
function fetchOnce(
  url: URL,
  ca: Buffer | undefined,
  part: Part,
  o: DownloadOptions,
  counter: { fetched: number; sinceSync: number; lastProgress: number },
): Promise<URL | null> {
  const size = o.manifest.size;
  const idle = o.idleTimeoutMs ?? 30_000;
  const total = o.requestTimeoutMs ?? 30 * 60_000;
  return new Promise<URL | null>((resolve, reject) => {
    const headers: Record<string, string> = { 'user-agent': 'qrvend-update', accept: 'application/octet-stream' };
    if (part.have > 0) headers.range = `bytes=${part.have}-`;
    const options = {
      method: 'GET',
      headers,
      timeout: idle,
      ...(url.protocol === 'https:' ? { rejectUnauthorized: true, ...(ca ? { ca } : {}) } : {}),
    };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options);
    let settled = false;
    const deadline = setTimeout(() => req.destroy(new Error(`no end within ${total / 1000} s`)), total);
    const onAbort = () => req.destroy(new Error('aborted'));
    o.signal?.addEventListener('abort', onAbort);
    const done = (err: Error | null, redirect: URL | null = null) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      o.signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(redirect);
    };
    req.on('timeout', () => req.destroy(new Error(`no data for ${idle / 1000} s`)));
    // A cut mid-body surfaces as an error on the request or the response: both end this attempt, not the download.
    req.on('error', (err) => done(o.signal?.aborted ? err : null));
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      if (status === 206 && part.have > 0) {
        const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? ''));
        if (range === null || Number(range[1]) !== part.have) {
          done(
            failed(
              `the artifact server answered a resume at byte ${part.have} with another ` +
                `range (${String(res.headers['content-range'] ?? 'none').slice(0, 60)})`,
            ),
          );
          return res.destroy();
        }
      } else if (status === 200) {
        if (part.have > 0) restartPart(part); // Range ignored: the whole file again, counted against the cap
      } else if (REDIRECTS.has(status)) {
        res.resume();
        let target: URL;
        try {
          // A repository's redirect (a CDN, a signed link) obeys the same rules as the offered URL.
          target = checkDownloadUrl(new URL(String(res.headers.location ?? ''), url).href);
        } catch (err) {
          return done(
            isQrvendError(err)
              ? failed(`the artifact server redirected to a URL that is refused: ${err.message}`)
              : failed('the artifact server redirected without a usable Location'),
          );
        }
        return done(null, target);
      } else if (status === 416 && part.have > 0) {
        restartPart(part); // what we hold is not a prefix the server knows
        res.resume();
        return res.on('end', () => done(null)).on('error', () => done(null));
      } else {
        res.resume();
        const retryable = status >= 500 || status === 408 || status === 429;
        return done(
          retryable
            ? null
            : failed(
                `the artifact server answered HTTP ${status}`,
                status === 404 ? `is ${o.manifest.artifact} published at that URL?` : 'check the URL and the server',
              ),
        );
      }
      res.on('data', (chunk: Buffer) => {
        if (counter.fetched + chunk.length > o.maxBytes) {
          done(
            new QrvendError(
              'UPDATE_DATA_CAP',
              `the download passed the data cap: ${counter.fetched + chunk.length} bytes ` +
                `received for this update, updates.maxDownloadBytes is ${o.maxBytes}`,
              { hint: 'a link that keeps cutting: raise updates.maxDownloadBytes or offer the update again later' },
            ),
          );
          return res.destroy(); // after done(): destroying may report the cut at once, and the first word counts
        }
        if (part.have + chunk.length > size) {
          done(
            new QrvendError(
              'UPDATE_ARTIFACT_MISMATCH',
              `the server sent more than the ${size} bytes the manifest names`,
              { hint: 'the URL serves another file than the signed release' },
            ),
          );
          return res.destroy();
        }
        writeSync(part.fd, chunk, 0, chunk.length, part.have);
        part.hash.update(chunk);
        part.have += chunk.length;
        counter.fetched += chunk.length;
        counter.sinceSync += chunk.length;
        if (counter.sinceSync >= FSYNC_EVERY_BYTES) {
          fsyncSync(part.fd);
          counter.sinceSync = 0;
          o.onFetched(counter.fetched);
        }
        const now = o.monotonicNow();
        if (now - counter.lastProgress >= (o.progressEveryMs ?? 5_000)) {
          counter.lastProgress = now;
          o.onProgress(part.have, size);
        }
      });
      res.on('end', () => done(null));
      res.on('error', () => done(null));
      res.on('aborted', () => done(null));
    });
    req.end();
  });
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
