/** Small HTTP pieces for the console's server: security headers, bounded bodies, cookies. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';

/** No inline script or style, nothing from another origin, no framing (docs/console.md). */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const MAX_FORM_BYTES = 16 * 1024;

export function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  extra: Record<string, string | string[]> = {},
): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the console's own forms.
    'Referrer-Policy': 'same-origin',
    'Cache-Control': 'no-store',
    ...extra,
  });
  res.end(body);
}

export function redirect(res: ServerResponse, location: string, cookies: string[] = []): void {
  const headers: Record<string, string | string[]> = { Location: location };
  if (cookies.length > 0) headers['Set-Cookie'] = cookies;
  send(res, 303, 'text/plain; charset=utf-8', 'see other\n', headers);
}

/** Reads an urlencoded form, at most MAX_FORM_BYTES; null when larger or of another type. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? '').split(';').slice(0, 50)) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

/**
 * A cookie no script can read, sent only to this site. `Secure` is dropped only when the
 * console serves plain HTTP on loopback (a browser would not send a Secure cookie back over it).
 */
export function cookie(name: string, value: string, maxAgeS: number, secure: boolean): string {
  return `${name}=${value}; Path=/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/**
 * The client's address for the login limits: the socket's, or behind the site's TLS proxy the
 * last address the proxy appended to X-Forwarded-For (the one entry a client cannot forge).
 */
export function clientAddress(req: IncomingMessage, behindProxy: boolean): string {
  if (behindProxy) {
    const forwarded = String(req.headers['x-forwarded-for'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const last = forwarded[forwarded.length - 1];
    if (last !== undefined) return last.slice(0, 64);
  }
  return req.socket.remoteAddress ?? 'unknown';
}

/** A POST from another site (Origin present and naming another host) is refused before the CSRF token is even read. */
export function crossOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined || origin === 'null') return origin === 'null';
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true;
  }
}
