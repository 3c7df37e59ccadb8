/**
 * The in-memory wire between the agent and the in-process VMC simulator (`mdb.port` = `sim`):
 * the same ByteLink contract as a serial port, without a device.
 *
 * Bytes are delivered on a later turn of the event loop (setImmediate), like a real line: a write
 * never runs the other side's handler inside the writer's call stack. The agent end can be
 * unplugged and replugged to exercise reopen handling; the VMC end lives as long as the wire, and
 * what the VMC sends while the agent end is closed is lost, as on a serial line.
 */
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import type { ByteLink } from './types.js';

class WireEnd implements ByteLink {
  private dataHandler: (chunk: Buffer) => void = () => {};
  private closeHandler: (reason: string) => void = () => {};
  private queue: Buffer[] = [];
  private scheduled = false;
  open = true;
  peer: WireEnd | null = null;

  constructor(readonly description: string) {}

  write(data: string | Buffer): void {
    if (!this.open) return;
    const peer = this.peer;
    if (peer === null || !peer.open) return;
    peer.enqueue(typeof data === 'string' ? Buffer.from(data, 'latin1') : Buffer.from(data));
  }

  onData(handler: (chunk: Buffer) => void): void {
    this.dataHandler = handler;
  }

  onClose(handler: (reason: string) => void): void {
    this.closeHandler = handler;
  }

  /** Delivery happens on the next turn; waiting one turn lets the peer take what was written. */
  drain(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }

  async close(): Promise<void> {
    this.open = false;
    this.queue = [];
  }

  /** The other side went away without us asking (unplug). */
  drop(reason: string): void {
    if (!this.open) return;
    this.open = false;
    this.queue = [];
    this.closeHandler(reason);
  }

  private enqueue(chunk: Buffer): void {
    this.queue.push(chunk);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const chunks = this.queue;
      this.queue = [];
      for (const c of chunks) {
        if (!this.open) return;
        this.dataHandler(c);
      }
    });
  }
}

export class MemoryWire {
  /** The VMC simulator's end; it stays open for the life of the wire. */
  readonly vmcEnd: ByteLink;
  private readonly vmc: WireEnd;
  private agent: WireEnd | null = null;
  private plugged = true;

  constructor(private readonly description = 'sim') {
    this.vmc = new WireEnd(`${description} (vmc end)`);
    this.vmcEnd = this.vmc;
  }

  /** An OpenLink for the agent: each call gives a fresh end and retires the previous one. */
  readonly openAgent = async (): Promise<ByteLink> => {
    if (!this.plugged) {
      throw new QrvendError(
        ErrorCodes.SERIAL_OPEN_FAILED,
        `the simulated MDB link "${this.description}" is unplugged`,
        {
          hint: 'this only happens in tests that unplug the simulated wire',
        },
      );
    }
    await this.agent?.close();
    const end = new WireEnd(this.description);
    end.peer = this.vmc;
    this.vmc.peer = end;
    this.agent = end;
    return end;
  };

  /** Pulls the plug: the agent end closes (its onClose fires) and opens fail until replug(). */
  unplug(): void {
    this.plugged = false;
    this.agent?.drop('unplugged');
    this.agent = null;
    this.vmc.peer = null;
  }

  replug(): void {
    this.plugged = true;
  }

  get isPlugged(): boolean {
    return this.plugged;
  }
}
