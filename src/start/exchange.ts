/**
 * One Start exchange without the sockets: what to answer for a request head, and for a body.
 * The server feeds it real requests; the fuzz tests feed it generated ones in-process, so the
 * same decisions are exercised at a hundred thousand cases a minute.
 *
 * Order before the body is read: rate limit (429), path (404), method (405), Content-Type (415),
 * declared Content-Length over the limit (413). Then the body checks of request-checks.ts.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { httpRefusals, type StartAnswer } from './answers.js';
import { createStartChecks, type StartCheckOptions, type StartChecks } from './request-checks.js';
import { ClientRateLimiter, type RateLimit } from './rate-limit.js';
import { declaredLength, isAcceptedContentType, matchStartPath } from './route.js';

export interface StartHead {
  method: string;
  /** The request target as received (path and query). */
  url: string;
  headers: IncomingHttpHeaders;
  /** The client's remote address: the rate limit's key. */
  client: string;
}

export type Preflight =
  { ok: true; integratorName: string; declaredLength: number | null } | { ok: false; answer: StartAnswer };

export interface StartExchangeOptions extends StartCheckOptions {
  maxBodyBytes: number;
  rateLimit: RateLimit;
  /** Milliseconds clock for the rate limit; tests inject one to step time deterministically. */
  now?: () => number;
}

/** What is decided before a byte of the body is read: rate limit, path, method, media type, length. */
export interface StartPreflight {
  preflight(head: StartHead): Preflight;
  readonly limiter: ClientRateLimiter;
}

export interface StartPreflightOptions {
  maxBodyBytes: number;
  rateLimit: RateLimit;
  now?: () => number;
}

/** The request head's checks alone; `qrvend relay` runs the same ones before it forwards a Start. */
export function createStartPreflight(options: StartPreflightOptions): StartPreflight {
  const limiter = new ClientRateLimiter(options.rateLimit);
  const now = options.now ?? (() => performance.now());

  function preflight(head: StartHead): Preflight {
    const rate = limiter.take(head.client, now());
    if (!rate.allowed) return { ok: false, answer: httpRefusals.rateLimited(rate.retryAfterMs) };

    const integratorName = matchStartPath(head.url);
    if (integratorName === null) return { ok: false, answer: httpRefusals.notFound() };
    if (head.method !== 'POST') return { ok: false, answer: httpRefusals.methodNotAllowed() };

    const contentType = head.headers['content-type'];
    if (!isAcceptedContentType(typeof contentType === 'string' ? contentType : undefined)) {
      return { ok: false, answer: httpRefusals.unsupportedMediaType() };
    }
    const length = declaredLength(head.headers['content-length']);
    if (length === 'invalid') return { ok: false, answer: httpRefusals.badRequest() };
    // Refused on the declaration alone: the body is never read.
    if (length !== null && length > options.maxBodyBytes) {
      return { ok: false, answer: httpRefusals.tooLarge(options.maxBodyBytes) };
    }
    return { ok: true, integratorName, declaredLength: length };
  }
  return { preflight, limiter };
}

export interface StartExchange {
  preflight(head: StartHead): Preflight;
  /** Judges a body that was received whole and within maxBodyBytes. Never throws. */
  decide(integratorName: string, body: Buffer, vouched?: boolean): Promise<StartAnswer>;
  /**
   * The whole exchange for a request whose body is already at hand: what the server answers
   * when the body arrives in time (the fuzz tests drive this in-process). Never throws.
   */
  answer(head: StartHead, body: Buffer): Promise<StartAnswer>;
  readonly checks: StartChecks;
  readonly limiter: ClientRateLimiter;
}

export function createStartExchange(options: StartExchangeOptions): StartExchange {
  const { preflight, limiter } = createStartPreflight(options);
  const checks = createStartChecks(options);

  async function answer(head: StartHead, body: Buffer): Promise<StartAnswer> {
    const pre = preflight(head);
    if (!pre.ok) return pre.answer;
    if (body.length > options.maxBodyBytes) return httpRefusals.tooLarge(options.maxBodyBytes);
    return checks.decide(pre.integratorName, body);
  }

  return { preflight, decide: (name, body, vouched) => checks.decide(name, body, vouched), answer, checks, limiter };
}
