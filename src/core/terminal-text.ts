/**
 * Untrusted text on a technician's terminal (docs/decisions/hardening.md item 2), and on the operator
 * console's pages (src/console/web/html.ts). A TransactionId, a gateway's
 * message or a file name can carry CR/LF (forged lines), ANSI escape sequences (clear the screen,
 * retitle the window, rewrite what was printed) or bidirectional controls (U+202E shows text
 * reversed). Every such character is shown as a visible escape instead: `\x1b`, `\u202e`.
 */

// C0 controls and DEL, C1 controls, bidi embeddings/overrides/isolates and marks, line and
// paragraph separators, the BOM/zero-width no-break space.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;
// The same set without C0: JSON.stringify escapes C0 inside strings already, and the only C0 it
// writes outside them is the line break of indented output, which must stay a line break.
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

export function escapeForTerminal(text: string): string {
  return text.replace(UNSAFE, (ch) => {
    const code = ch.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON of untrusted values for a terminal or a pipe (`--json`, docs/decisions/fleet-trust.md item 12): JSON.stringify
 * leaves C1 and bidi controls raw, so a device's `\u009b` would reach the terminal as a CSI. Each
 * becomes its `\uXXXX` escape, which is still valid JSON and parses back to the same string.
 */
export function jsonForTerminal(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(
    UNSAFE_IN_JSON,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
