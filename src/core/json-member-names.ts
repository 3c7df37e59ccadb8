/**
 * Member names read from JSON text before any object is built from it. JSON.parse makes
 * `"__proto__"` an ordinary member, but any later step that copies the object member by member
 * (a schema library rebuilding a record, a spread, an assignment loop) turns that member into the
 * copy's prototype, and a check that walks the copy never sees it (docs/security.md, "Command
 * signing": a top-level `__proto__` in config.set wrote an empty overlay and restarted the agent).
 * So such names are looked for in the text itself, where nothing can hide them.
 */

interface Frame {
  object: boolean;
  /** The member being read (objects), or the element's index (arrays). */
  key: string;
  index: number;
}

/** A string token's value (escapes decoded: `"\u005f_proto__"` is `__proto__`), or its raw text if malformed. */
function decodeName(token: string): string {
  try {
    return JSON.parse(token) as string;
  } catch {
    return token.slice(1, -1);
  }
}

/**
 * The path (member names and array indexes, outermost first) of the first member of `text` whose
 * name is in `names`, or null. Linear in the text; text that is not valid JSON is read up to its
 * end and never makes it throw (the caller's JSON.parse says what is wrong with it).
 */
export function firstMemberNamed(text: string, names: ReadonlySet<string>): string[] | null {
  const stack: Frame[] = [];
  let expectName = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i];
    if (ch === '"') {
      const start = i;
      for (i += 1; i < text.length && text[i] !== '"'; i += 1) if (text[i] === '\\') i += 1;
      const top = stack[stack.length - 1];
      if (expectName && top?.object === true) {
        const name = decodeName(text.slice(start, i + 1));
        const path = [...stack.slice(0, -1).map((f) => (f.object ? f.key : String(f.index))), name];
        if (names.has(name)) return path;
        top.key = name;
        expectName = false;
      }
    } else if (ch === '{' || ch === '[') {
      stack.push({ object: ch === '{', key: '', index: 0 });
      expectName = ch === '{';
    } else if (ch === '}' || ch === ']') {
      stack.pop();
      expectName = false;
    } else if (ch === ',') {
      const top = stack[stack.length - 1];
      if (top?.object === true) expectName = true;
      else if (top !== undefined) top.index += 1;
    }
  }
  return null;
}

/** The one name JavaScript gives a meaning on assignment: a member so named becomes a prototype when copied. */
export const PROTOTYPE_MEMBER: ReadonlySet<string> = new Set(['__proto__']);
