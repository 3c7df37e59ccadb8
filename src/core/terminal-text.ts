/**
 * Untrusted text on a technician's terminal (issue 20 item 2). A TransactionId, a gateway's
 * message or a file name can carry CR/LF (forged lines), ANSI escape sequences (clear the screen,
 * retitle the window, rewrite what was printed) or bidirectional controls (U+202E shows text
 * reversed). Every such character is shown as a visible escape instead: `\x1b`, `\u202e`.
 */

// C0 controls and DEL, C1 controls, bidi embeddings/overrides/isolates and marks, line and
// paragraph separators, the BOM/zero-width no-break space.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

export function escapeForTerminal(text: string): string {
  return text.replace(UNSAFE, (ch) => {
    const code = ch.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

