/**
 * Nesting bound for Start bodies. JSON.parse copes with any depth, but the ConsumerData is echoed
 * and recorded, and JSON.stringify (and every other recursive walk) overflows the stack on a
 * body nested a hundred thousand levels deep. Refusing such a body up front keeps every later
 * step safe. No real Start comes close: the seed's members are flat; ConsumerData is a small object.
 */
export const MAX_JSON_DEPTH = 32;

/** True when no array or object in `text` is nested deeper than `max`. Strings are skipped. */
export function jsonDepthWithin(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \ */) i += 1;
      else if (ch === 0x22 /* " */) inString = false;
    } else if (ch === 0x22) {
      inString = true;
    } else if (ch === 0x5b /* [ */ || ch === 0x7b /* { */) {
      depth += 1;
      if (depth > max) return false;
    } else if (ch === 0x5d /* ] */ || ch === 0x7d /* } */) {
      depth -= 1;
    }
  }
  return true;
}
