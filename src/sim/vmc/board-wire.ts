/**
 * The simulated board's wire: the link to the host, line framing, what the board writes (and a
 * hung or noisy board's failure to), the log of host commands, and the timers of the simulation.
 * VmcSimulator (simulator.ts) builds the board's answers and the VMC's behaviour on top of it.
 */
import { EventEmitter } from 'node:events';
import { encodeBoardLine, parseCommand, type BoardCommand, type BoardLine } from '../../mdb/codec/index.js';
import { LineFramer, type ByteLink } from '../../mdb/transport/index.js';
import { noiseLine, NOISE_KINDS, type NoiseKind } from './noise.js';
import { seededRandom } from '../seeded-random.js';

export interface BoardWireOptions {
  decimalPlaces: number;
  /** Host lines kept for inspection. */
  keepCommands: number;
  /** Seed for noise; default from the clock. */
  seed?: number;
}

/** Events: 'command' (BoardCommand, raw line) for each host command; 'sent' (line) for each line sent. */
export abstract class BoardWire extends EventEmitter {
  protected link: ByteLink | null = null;
  private silentUntil = 0;
  private readonly commands: string[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly random: () => number;

  constructor(private readonly wire: BoardWireOptions) {
    super();
    this.random = seededRandom(wire.seed ?? Date.now());
  }

  /** The board's answer to one parsed host command. */
  protected abstract onCommand(cmd: BoardCommand): void;

  /** Connects to a link (a fresh framer each time, like the agent). */
  attach(link: ByteLink): void {
    this.link = link;
    const framer = new LineFramer(1024, { onLine: (line) => this.onHostLine(line), onOverlong: () => {} });
    link.onData((chunk) => {
      if (this.link === link) framer.push(chunk);
    });
    link.onClose(() => {
      if (this.link === link) this.link = null;
    });
  }

  get attached(): boolean {
    return this.link !== null;
  }

  /**
   * A broken board: sends `line` `count` times whatever the state (out of sequence as a rule), in
   * one write. For tests of what a noisy board does to the reader and the journal.
   */
  spew(line: BoardLine, count: number): void {
    const text = `${encodeBoardLine(line, this.wire.decimalPlaces)}\r\n`;
    this.writeRaw(Buffer.from(text.repeat(count), 'latin1'));
  }

  /** Nothing leaves the board for `ms` (no r,ACK, no answers); commands meanwhile are lost. */
  silent(ms: number): void {
    this.silentUntil = Date.now() + ms;
  }

  /** Sends `count` noise lines in batches, interleaved with normal traffic. */
  async noise(count: number, kinds: readonly NoiseKind[] = NOISE_KINDS, maxLineLength = 256): Promise<void> {
    let left = count;
    while (left > 0) {
      const batch = Math.min(left, 50);
      const chunks: Buffer[] = [];
      for (let i = 0; i < batch; i++)
        chunks.push(noiseLine(kinds[Math.floor(this.random() * kinds.length)]!, this.random, maxLineLength));
      this.writeRaw(Buffer.concat(chunks));
      left -= batch;
      // Pace the flood by what the line carries, so polls and protocol lines interleave with it
      // as they would on a real wire instead of queueing behind megabytes.
      await (this.link?.drain() ?? Promise.resolve());
      await new Promise((r) => setImmediate(r));
    }
  }

  /** Host lines received, oldest first. */
  received(): string[] {
    return [...this.commands];
  }

  /** Stops the simulation's timers and closes the link. */
  protected async closeWire(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const link = this.link;
    this.link = null;
    await link?.close();
  }

  protected send(line: BoardLine): void {
    const text = encodeBoardLine(line, this.wire.decimalPlaces);
    if (this.writeRaw(Buffer.from(`${text}\r\n`, 'latin1')) && line.kind !== 'poll') this.emit('sent', text);
  }

  protected writeRaw(bytes: Buffer): boolean {
    if (this.link === null || Date.now() < this.silentUntil) return false;
    this.link.write(bytes);
    return true;
  }

  /** Runs `fn` after `ms`, unless the simulator is closed first. */
  protected later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private onHostLine(line: string): void {
    if (Date.now() < this.silentUntil) return; // a hung board hears nothing either
    this.commands.push(line);
    if (this.commands.length > this.wire.keepCommands) this.commands.shift();
    const parsed = parseCommand(line);
    if (!parsed.ok) {
      this.send({ kind: 'error', text: `CMD ${parsed.reason}` });
      return;
    }
    this.emit('command', parsed.value, line);
    this.onCommand(parsed.value);
  }
}
