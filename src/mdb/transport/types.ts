/**
 * A byte link to the adapter board: a real serial port, a pseudo-terminal, the in-memory wire to
 * the built-in VMC simulator, or serialport's mock binding in unit tests. Everything above this
 * interface (framing, codec, reader) is the same for all of them.
 */
export interface ByteLink {
  /** For logs: the device path, or what the link is. */
  readonly description: string;
  /** Queues bytes for the board. Never throws: a failed write closes the link (onClose). */
  write(data: string | Buffer): void;
  /** One handler; chunks arrive in order, cut anywhere (not on line boundaries). */
  onData(handler: (chunk: Buffer) => void): void;
  /** Called at most once, when the link ends for any reason other than close() from our side. */
  onClose(handler: (reason: string) => void): void;
  /** Resolves when the bytes written so far have left (bounded wait); lets a flood writer pace itself. */
  drain(): Promise<void>;
  /** Closes the link; safe to call twice. onClose is not called for a close we asked for. */
  close(): Promise<void>;
}

/** Opens a fresh link each call (reopen after an unplug is another call). Rejects with a QrvendError. */
export type OpenLink = () => Promise<ByteLink>;
