/**
 * Cuts a byte stream into lines at `\n` (a `\r` before it is dropped), with a hard cap on line
 * length. serialport's readline parser buffers without limit, so a board spewing garbage without
 * a terminator would grow memory forever; here an overlong line is dropped as soon as it passes
 * the cap and everything up to the next terminator is skipped.
 *
 * Make a new framer for every open link: a partial line left over from before a close must not
 * be glued to the first line after the reopen.
 */
export interface LineFramerHandlers {
  onLine(line: string): void;
  /** A line longer than the cap was dropped; `head` is its first bytes (for the noise sample). */
  onOverlong(head: string): void;
}

const LF = 0x0a;
const CR = 0x0d;

export class LineFramer {
  private pending: Buffer[] = [];
  private pendingLength = 0;
  /** True while skipping the rest of an overlong line. */
  private discarding = false;

  constructor(
    private readonly maxLineLength: number,
    private readonly handlers: LineFramerHandlers,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const lf = chunk.indexOf(LF, start);
      const end = lf === -1 ? chunk.length : lf;
      this.take(chunk.subarray(start, end));
      if (lf === -1) return;
      this.finishLine();
      start = lf + 1;
    }
  }

  /** Bytes held for an unfinished line (for tests and stats). */
  get buffered(): number {
    return this.pendingLength;
  }

  private take(part: Buffer): void {
    if (this.discarding || part.length === 0) return;
    // The cap counts the line without its terminator; one extra byte allows a trailing \r.
    if (this.pendingLength + part.length > this.maxLineLength + 1) {
      const head = Buffer.concat([...this.pending, part])
        .subarray(0, 40)
        .toString('latin1');
      this.reset();
      this.discarding = true;
      this.handlers.onOverlong(head);
      return;
    }
    this.pending.push(part);
    this.pendingLength += part.length;
  }

  private finishLine(): void {
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    let line = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingLength);
    this.reset();
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    if (line.length > this.maxLineLength) {
      this.handlers.onOverlong(line.subarray(0, 40).toString('latin1'));
      return;
    }
    // latin1 maps every byte to one character, so binary noise stays countable, never "decoded".
    this.handlers.onLine(line.toString('latin1'));
  }

  private reset(): void {
    this.pending = [];
    this.pendingLength = 0;
  }
}
