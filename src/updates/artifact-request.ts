/**
 * One GET of an update's artifact (docs/decisions/remote-updates.md), from what the part file
 * already holds on: the status checks (a resume's range, a server that ignores Range, a redirect,
 * a refusal), then each chunk written, hashed and counted against the data cap. downloadArtifact
 * (download.ts) runs these requests until the file is whole.
 */
import { createHash, type Hash } from 'node:crypto';
import { fsyncSync, ftruncateSync, writeSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isQrvendError, QrvendError } from '../core/errors.js';
import { isLoopbackHost } from '../config/schema.js';
import type { UpdateManifest } from '../fleet/contract/manifest-schema.js';

const FSYNC_EVERY_BYTES = 4 * 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function failed(message: string, hint?: string): QrvendError {
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

/** The part file: its descriptor, the bytes it holds, and their running hash. */
export interface Part {
  fd: number;
  have: number;
  hash: Hash;
}

export function restartPart(part: Part): void {
  ftruncateSync(part.fd, 0);
  part.have = 0;
  part.hash = createHash('sha256');
}

/** Bytes received for this update (restarts included), bytes since the last fsync, the last progress report. */
export interface DownloadCounter {
  fetched: number;
  sinceSync: number;
  lastProgress: number;
}

/** What one request needs of the download's options (DownloadOptions, download.ts). */
export interface ArtifactRequestOptions {
  manifest: Pick<UpdateManifest, 'size' | 'artifact'>;
  maxBytes: number;
  onFetched(total: number): void;
  onProgress(bytes: number, size: number): void;
  progressEveryMs?: number;
  idleTimeoutMs?: number;
  requestTimeoutMs?: number;
  monotonicNow(): number;
  signal?: AbortSignal;
}

/**
 * One GET from `part.have` on; resolves when the response ended or was cut (the caller looks at
 * part.have), or with the target of a redirect.
 */
export function fetchOnce(
  url: URL,
  ca: Buffer | undefined,
  part: Part,
  o: ArtifactRequestOptions,
  counter: DownloadCounter,
): Promise<URL | null> {
  return new Promise<URL | null>((resolve, reject) => {
    new ArtifactRequest(url, part, o, counter, resolve, reject).send(ca);
  });
}

/** One request under way: its deadline, the abort listener, and whether it has settled. */
class ArtifactRequest {
  private req!: ClientRequest;
  private settled = false;
  private deadline: NodeJS.Timeout | undefined;
  private readonly onAbort = (): void => {
    this.req.destroy(new Error('aborted'));
  };

  constructor(
    private readonly url: URL,
    private readonly part: Part,
    private readonly o: ArtifactRequestOptions,
    private readonly counter: DownloadCounter,
    private readonly resolve: (redirect: URL | null) => void,
    private readonly reject: (err: Error) => void,
  ) {}

  send(ca: Buffer | undefined): void {
    const { url, o } = this;
    const idle = o.idleTimeoutMs ?? 30_000;
    const total = o.requestTimeoutMs ?? 30 * 60_000;
    const headers: Record<string, string> = { 'user-agent': 'qrvend-update', accept: 'application/octet-stream' };
    if (this.part.have > 0) headers.range = `bytes=${this.part.have}-`;
    const options = {
      method: 'GET',
      headers,
      timeout: idle,
      ...(url.protocol === 'https:' ? { rejectUnauthorized: true, ...(ca ? { ca } : {}) } : {}),
    };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options);
    this.req = req;
    this.deadline = setTimeout(() => req.destroy(new Error(`no end within ${total / 1000} s`)), total);
    o.signal?.addEventListener('abort', this.onAbort);
    req.on('timeout', () => req.destroy(new Error(`no data for ${idle / 1000} s`)));
    // A cut mid-body surfaces as an error on the request or the response: both end this attempt, not the download.
    req.on('error', (err) => this.done(o.signal?.aborted ? err : null));
    req.on('response', (res: IncomingMessage) => this.onResponse(res));
    req.end();
  }

  private done(err: Error | null, redirect: URL | null = null): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.deadline);
    this.o.signal?.removeEventListener('abort', this.onAbort);
    if (err) this.reject(err);
    else this.resolve(redirect);
  }

  private onResponse(res: IncomingMessage): void {
    if (!this.bodyWanted(res)) return;
    res.on('data', (chunk: Buffer) => this.onChunk(res, chunk));
    res.on('end', () => this.done(null));
    res.on('error', () => this.done(null));
    res.on('aborted', () => this.done(null));
  }

  /** True when the body is the artifact's bytes from part.have on; else the answer is dealt with here. */
  private bodyWanted(res: IncomingMessage): boolean {
    const part = this.part;
    const status = res.statusCode ?? 0;
    if (status === 206 && part.have > 0) {
      const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? ''));
      if (range === null || Number(range[1]) !== part.have) {
        this.done(
          failed(
            `the artifact server answered a resume at byte ${part.have} with another ` +
              `range (${String(res.headers['content-range'] ?? 'none').slice(0, 60)})`,
          ),
        );
        res.destroy();
        return false;
      }
    } else if (status === 200) {
      if (part.have > 0) restartPart(part); // Range ignored: the whole file again, counted against the cap
    } else if (REDIRECTS.has(status)) {
      res.resume();
      this.followRedirect(res);
      return false;
    } else if (status === 416 && part.have > 0) {
      restartPart(part); // what we hold is not a prefix the server knows
      res.resume();
      res.on('end', () => this.done(null)).on('error', () => this.done(null));
      return false;
    } else {
      res.resume();
      const retryable = status >= 500 || status === 408 || status === 429;
      this.done(
        retryable
          ? null
          : failed(
              `the artifact server answered HTTP ${status}`,
              status === 404 ? `is ${this.o.manifest.artifact} published at that URL?` : 'check the URL and the server',
            ),
      );
      return false;
    }
    return true;
  }

  private followRedirect(res: IncomingMessage): void {
    let target: URL;
    try {
      // A repository's redirect (a CDN, a signed link) obeys the same rules as the offered URL.
      target = checkDownloadUrl(new URL(String(res.headers.location ?? ''), this.url).href);
    } catch (err) {
      this.done(
        isQrvendError(err)
          ? failed(`the artifact server redirected to a URL that is refused: ${err.message}`)
          : failed('the artifact server redirected without a usable Location'),
      );
      return;
    }
    this.done(null, target);
  }

  private onChunk(res: IncomingMessage, chunk: Buffer): void {
    const { part, o, counter } = this;
    const size = o.manifest.size;
    if (counter.fetched + chunk.length > o.maxBytes) {
      this.done(
        new QrvendError(
          'UPDATE_DATA_CAP',
          `the download passed the data cap: ${counter.fetched + chunk.length} bytes ` +
            `received for this update, updates.maxDownloadBytes is ${o.maxBytes}`,
          { hint: 'a link that keeps cutting: raise updates.maxDownloadBytes or offer the update again later' },
        ),
      );
      res.destroy(); // after done(): destroying may report the cut at once, and the first word counts
      return;
    }
    if (part.have + chunk.length > size) {
      this.done(
        new QrvendError('UPDATE_ARTIFACT_MISMATCH', `the server sent more than the ${size} bytes the manifest names`, {
          hint: 'the URL serves another file than the signed release',
        }),
      );
      res.destroy();
      return;
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
  }
}
