/** Small HTTP pieces for the console's server: security headers, answers, cookies, the form checks. */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply } from 'fastify';

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

/** Sent with every answer of the console, pages, errors and the live stream alike. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the console's own forms.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/** The largest request body the console reads (its forms are a few hundred bytes). */
export const MAX_FORM_BYTES = 16 * 1024;

export const HTML = 'text/html; charset=utf-8';
export const TEXT = 'text/plain; charset=utf-8';

/** A plain-text answer. */
export function plain(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).type(TEXT).send(text);
}

/** 303 to another page of the console (after a form, or to the login page). */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('Location', location).type(TEXT).send('see other\n');
}

/**
 * A cookie no script can read, sent only to this site. `Secure` is dropped only when the
 * console serves plain HTTP on loopback (a browser would not send a Secure cookie back over it).
 */
export function cookieOptions(maxAgeS: number, secure: boolean): CookieSerializeOptions {
  return { path: '/', maxAge: maxAgeS, httpOnly: true, sameSite: 'strict', secure };
}

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** A POST from another site (Origin present and naming another host) is refused before the CSRF token is even read. */
export function crossOrigin(headers: IncomingHttpHeaders): boolean {
  const origin = headers.origin;
  if (origin === undefined || origin === 'null') return origin === 'null';
  try {
    return new URL(origin).host !== headers.host;
  } catch {
    return true;
  }
}

/** A form's fields as the console reads them: strings (the route's body schema refuses anything else). */
export type Form = Partial<Record<string, string>>;

/** The parsed form of a request, or an empty one when it came without a body. */
export function formOf(body: unknown): Form {
  return typeof body === 'object' && body !== null ? (body as Form) : {};
}

/** A body schema for a form: each named field at most one string (a repeated field is a 400). */
export function formSchema(fields: readonly string[]) {
  return {
    type: 'object',
    properties: Object.fromEntries(fields.map((f) => [f, { type: 'string' }])),
  } as const;
}

/** A query schema: each named parameter at most one string (a repeated one is a 400); others are ignored. */
export function querySchema(names: readonly string[]) {
  return {
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
  } as const;
}

/** The validated query as the pages read it. */
export function queryParams(query: unknown): URLSearchParams {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(formOf(query))) if (typeof v === 'string') params.set(k, v);
  return params;
}
