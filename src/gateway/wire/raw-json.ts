/**
 * JSON text written exactly as chosen. JSON.stringify can only write a number the way JavaScript
 * prints it (`5`, `234`), and it re-serializes whatever it is given; the gateway wants amounts
 * with the currency's decimals (`5.00`, `234.0`) and PaymentInfo back byte for byte. A RawJson
 * value is inserted into the output verbatim by `stringifyWire`.
 */

export class RawJson {
  /** `text` must be one complete JSON value; checked once here so a bad fragment never reaches the wire. */
  constructor(readonly text: string) {
    JSON.parse(text);
  }

  /** What a plain JSON.stringify (logs, diagnostics) makes of it: the value it stands for. */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/**
 * JSON.stringify's output for plain data (members whose value is undefined are left out, like
 * JSON.stringify does), except that a RawJson value is written as its text.
 */
export function stringifyWire(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`cannot write ${typeof value} as JSON`);
    return text;
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : stringifyWire(v))).join(',')}]`;
  const parts: string[] = [];
  for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
    if (member === undefined || typeof member === 'function') continue;
    parts.push(`${JSON.stringify(key)}:${stringifyWire(member)}`);
  }
  return `{${parts.join(',')}}`;
}
