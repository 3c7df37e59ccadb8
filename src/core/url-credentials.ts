/**
 * A URL as it may be logged or shown: the user-info (a broker username and password) removed.
 * Null when the text does not parse as a URL, so each caller says that in its own way.
 */
export function withoutCredentials(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.username === '' && u.password === '') return url;
  u.username = '';
  u.password = '';
  return u.toString();
}
