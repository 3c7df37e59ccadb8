/**
 * One webhook attempt (docs/console.md "Webhooks"): a POST of the JSON body with the Standard
 * Webhooks headers, bounded in time (`timeoutMs` for the whole exchange) and in what is read of
 * the answer (ANSWER_BYTES; the rest is not read). No redirect is followed: a 3xx is a failed
 * attempt naming where it pointed, so a receiver cannot send the console on to another host. The
 * address is checked after every name lookup (./receiver-address.ts). Durations are measured on
 * the monotonic clock.
 */
import { got } from 'got';
import { guardedLookup, type ReceiverPolicy } from './receiver-address.js';

/** The most of an answer the console reads (and keeps 512 characters of, in the delivery log). */
export const ANSWER_BYTES = 64 * 1024;

export interface PostOptions {
  policy: ReceiverPolicy;
  timeoutMs: number;
  /** Extra certificate authorities for receivers (a site's own CA), PEM; null: the system's. */
  ca: Buffer | null;
}

export interface PostResult {
  ok: boolean;
  /** The HTTP status, or null when no answer came. */
  status: number | null;
  /** Why it failed (or the answer's start, when it did not). */
  error: string | null;
  durationMs: number;
}

function failure(status: number | null, error: string, started: number): PostResult {
  return { ok: false, status, error: error.slice(0, 512), durationMs: Math.round(performance.now() - started) };
}

function readBounded(stream: NodeJS.ReadableStream & { destroy(): void }): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= ANSWER_BYTES) chunks.push(chunk);
      if (size >= ANSWER_BYTES) {
        stream.destroy();
        resolve(Buffer.concat(chunks).toString('utf8'));
      }
    });
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}

/** Posts `body` to `url`; never throws (every failure is a result). */
export async function postWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): Promise<PostResult> {
  const started = performance.now();
  const stream = got.stream.post(url, {
    body,
    headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'qrvend-console-webhooks' },
    followRedirect: false,
    throwHttpErrors: false,
    retry: { limit: 0 },
    timeout: { request: options.timeoutMs },
    dnsLookup: guardedLookup(options.policy) as never,
    https: options.ca === null ? {} : { certificateAuthority: options.ca },
  });
  try {
    const response = await new Promise<{ statusCode: number; headers: Record<string, unknown> }>((resolve, reject) => {
      stream.once('response', resolve);
      stream.once('error', reject);
    });
    const answer = await readBounded(stream);
    const status = response.statusCode;
    if (status >= 200 && status < 300) {
      return { ok: true, status, error: null, durationMs: Math.round(performance.now() - started) };
    }
    if (status >= 300 && status < 400) {
      const location = String(response.headers.location ?? '').slice(0, 200);
      return failure(status, `redirect to ${location || '(no Location)'} not followed: give the final URL`, started);
    }
    return failure(status, `answered ${status}: ${answer.slice(0, 400)}`, started);
  } catch (err) {
    stream.destroy();
    const e = err as Error & { code?: string };
    return failure(null, `${e.code ?? 'ERROR'}: ${e.message}`, started);
  }
}
