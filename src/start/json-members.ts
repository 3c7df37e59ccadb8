/**
 * Duplicate members in a JSON object (docs/decisions/hardening.md item 3). JSON.parse keeps the last of two
 * members with the same name, so `{"SecretToken":"a…","SecretToken":"b…"}` is read as "b" by us
 * and perhaps as "a" by a proxy, a log pipeline or the wallet's own audit: two readers of the same
 * request disagreeing is the start of a smuggling bug. RFC 8259 says names SHOULD be unique; a
 * Start body with a repeated name is refused as malformed.
 */

/**
 * The first member name repeated within one object of `text`, or null. `text` must already be
 * valid JSON (call after JSON.parse succeeded). Names are compared decoded (`"a"` equals `"\u0061"`).
 */
export function firstDuplicateMember(text: string): string | null {
  // One entry per open object or array: the names seen (objects) or null (arrays).
  const stack: Array<Set<string> | null> = [];
  let expectName = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === '"') {
      const start = i;
      for (i += 1; text[i] !== '"'; i += 1) if (text[i] === '\\') i += 1;
      const names = stack[stack.length - 1];
      if (expectName && names) {
        const name = JSON.parse(text.slice(start, i + 1)) as string;
        if (names.has(name)) return name;
        names.add(name);
        expectName = false;
      }
    } else if (ch === '{') {
      stack.push(new Set());
      expectName = true;
    } else if (ch === '[') {
      stack.push(null);
      expectName = false;
    } else if (ch === '}' || ch === ']') {
      stack.pop();
      expectName = false;
    } else if (ch === ',') {
      expectName = stack[stack.length - 1] instanceof Set;
    }
  }
  return null;
}
