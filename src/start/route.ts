/**
 * The request line and headers of a Start: which path, which method, which media type. These
 * are decided before a byte of the body is read.
 */

/** `POST /payment/v2/transactions/Gateway/{integratorName}/start` (the seed's Start path). */
const START_PATH = /^\/payment\/v2\/transactions\/Gateway\/([^/]+)\/start$/;

/** A request target longer than this is not a Start: refuse it without looking further. */
const MAX_TARGET_LENGTH = 2048;

/**
 * The integratorName in the path, percent-decoded, or null when the target is not the Start
 * path. The query string is ignored (the seed defines none).
 */
export function matchStartPath(target: string): string | null {
  if (target.length > MAX_TARGET_LENGTH) return null;
  const queryAt = target.indexOf('?');
  const path = queryAt === -1 ? target : target.slice(0, queryAt);
  const m = START_PATH.exec(path);
  if (m === null || m[1] === undefined) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return null; // broken percent-encoding: not a path we serve
  }
}

/**
 * The seed's request media types: application/json, application/*+json, text/json. A charset,
 * when given, must be UTF-8 (JSON is UTF-8 on the wire, RFC 8259).
 */
export function isAcceptedContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [mediaType = '', ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  const typeOk =
    mediaType === 'application/json' ||
    mediaType === 'text/json' ||
    /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(mediaType);
  if (!typeOk) return false;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq === -1) continue;
    if (param.slice(0, eq).trim() !== 'charset') continue;
    const charset = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (charset !== 'utf-8' && charset !== 'utf8') return false;
  }
  return true;
}

/**
 * The declared body length: a number, null when there is no Content-Length (chunked), or
 * 'invalid' when the header is not a plain decimal (the HTTP parser usually refuses those first).
 */
export function declaredLength(header: string | undefined): number | null | 'invalid' {
  if (header === undefined) return null;
  if (!/^\d{1,15}$/.test(header.trim())) return 'invalid';
  return Number(header.trim());
}
