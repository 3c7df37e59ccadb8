/**
 * Text the console's database can hold. PostgreSQL's text cannot hold U+0000, and an unpaired
 * UTF-16 surrogate (which JSON can carry as `\ud800`) has no UTF-8 form: the driver would store
 * it as U+FFFD, so two different eventIds could become one. SQLite would take the first and
 * alter the second the same way. Ingest refuses such a message at its check, on either database
 * (docs/console.md, "How an event is kept"); what the console records about a refusal is
 * escaped so the record itself can always be stored.
 */

const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/** The text with U+0000 and unpaired surrogates written as visible `\uXXXX` escapes. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Why a decoded message cannot be stored as it is (the path of the first string, or object key,
 * holding U+0000 or an unpaired surrogate), or null. Walks without recursion: a 64 KiB payload
 * can nest tens of thousands of levels.
 */
export function unstorableText(value: unknown): string | null {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      const m = UNSTORABLE.exec(v);
      if (m !== null) return `${path || 'payload'}: ${describe(m[0])}, which the console's database cannot store`;
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push({ value: item, path: path === '' ? String(i) : `${path}.${i}` }));
    } else if (typeof v === 'object' && v !== null) {
      for (const [key, item] of Object.entries(v)) {
        const at = path === '' ? storableText(key) : `${path}.${storableText(key)}`;
        if (UNSTORABLE.test(key)) return `${at}: a key ${describe(UNSTORABLE.exec(key)![0])}`;
        stack.push({ value: item, path: at });
      }
    }
  }
  return null;
}

function describe(c: string): string {
  const code = c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
  return c === '\u0000' ? 'holds U+0000' : `holds an unpaired surrogate U+${code}`;
}
