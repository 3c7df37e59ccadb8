/**
 * The exact text of one member of a JSON object, as it arrived. Used to keep the gateway's
 * PaymentInfo byte for byte (docs/decisions/gateway-interface.md) and to read amounts without a round trip through
 * a double. The input has already been accepted by JSON.parse, so the scan only needs to follow
 * strings and brackets; like JSON.parse, the last of duplicate members wins.
 */

function skipSpace(text: string, i: number): number {
  while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  return i;
}

/** Index just after the string that starts at `i` (text[i] is the opening quote). */
function endOfString(text: string, i: number): number {
  i++;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  throw new SyntaxError('unterminated string');
}

/** Index just after the JSON value that starts at `i`. */
function endOfValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return endOfString(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    while (i < text.length) {
      const ch = text[i];
      if (ch === '"') {
        i = endOfString(text, i);
        continue;
      }
      if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    throw new SyntaxError('unterminated object or array');
  }
  // number, true, false, null
  while (i < text.length && !/[\s,}\]]/.test(text[i]!)) i++;
  return i;
}

/**
 * The raw text of member `name` of the object `objectText` (a JSON object), or null when absent.
 * Throws SyntaxError when `objectText` is not an object.
 */
export function memberText(objectText: string, name: string): string | null {
  let i = skipSpace(objectText, 0);
  if (objectText[i] !== '{') throw new SyntaxError('not a JSON object');
  i = skipSpace(objectText, i + 1);
  let found: string | null = null;
  while (i < objectText.length && objectText[i] !== '}') {
    const keyEnd = endOfString(objectText, i);
    const key = JSON.parse(objectText.slice(i, keyEnd)) as string;
    i = skipSpace(objectText, keyEnd);
    i = skipSpace(objectText, i + 1); // the colon
    const valueEnd = endOfValue(objectText, i);
    if (key === name) found = objectText.slice(i, valueEnd);
    i = skipSpace(objectText, valueEnd);
    if (objectText[i] === ',') i = skipSpace(objectText, i + 1);
  }
  return found;
}
