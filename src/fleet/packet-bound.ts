/**
 * What the broker may hand an MQTT client of ours (docs/decisions/fleet-trust.md item 11). A status of 200 MB on a
 * machine's own topic took the relay from 91 to 535 MiB before it was dropped: mqtt.js buffers a
 * whole packet before anyone can look at its size.
 *
 * Two bounds, because the fleet speaks both protocols:
 * - MQTT 5: CONNECT announces a Maximum Packet Size (`maxPacketProperties`). A broker that honours
 *   it (mosquitto does) never sends a larger packet: it drops it for this client alone.
 * - MQTT 3.1.1 has no such property, and a broker may ignore it (aedes does): every packet read
 *   from the socket goes through `PacketSizeFilter` before mqtt.js parses it. A packet within the
 *   bound passes unchanged. An oversized PUBLISH is cut to its topic and packet id with a stand-in
 *   payload one byte over MAX_PAYLOAD_BYTES, so mqtt.js still acknowledges it (QoS 1) and every
 *   handler drops it by size before parsing it as JSON, as it drops any oversized payload. The
 *   rest of the packet is skipped as it streams by: memory stays at one socket chunk. Dropping
 *   the connection instead would be a loop: a retained status comes back at every reconnect.
 *   Any other packet type over the bound is not a broker's: the connection is closed.
 */
import { Transform, type Readable, type TransformCallback, type Writable } from 'node:stream';
import type { IClientOptions, MqttClient } from 'mqtt';
import { MAX_PAYLOAD_BYTES } from './contract/messages.js';

/** The largest packet we take: a contract payload and room for the topic and MQTT 5 properties. */
export const MAX_PACKET_BYTES = MAX_PAYLOAD_BYTES + 4 * 1024;

/** The payload an oversized PUBLISH is cut to: over the contract's limit, so every handler drops it by size. */
export const STAND_IN_PAYLOAD_BYTES = MAX_PAYLOAD_BYTES + 1;

/** The MQTT 5 CONNECT properties with the Maximum Packet Size added (unchanged for 3.1.1, which has none). */
export function maxPacketProperties(
  protocolVersion: number | undefined,
  properties: IClientOptions['properties'] = undefined,
): IClientOptions['properties'] {
  if (protocolVersion !== 5) return properties;
  return { ...properties, maximumPacketSize: MAX_PACKET_BYTES };
}

const PUBLISH = 3;

type State = { at: 'fixed' } | { at: 'pass'; left: number } | { at: 'skip'; left: number } | CutPublish;

/** An oversized PUBLISH: its topic and packet id are kept, its MQTT 5 properties skipped, then the rest. */
interface CutPublish {
  at: 'publish';
  first: number;
  packetBytes: number;
  remaining: number;
  /** Bytes of `remaining` read so far. */
  consumed: number;
  /** Topic length, topic, packet id. */
  kept: number[];
  /** Where the packet id ends in `kept`, once the topic length is known. */
  idEnd: number | null;
  propsLength: number[];
  propsLeft: number | null;
}

export class PacketTooLargeError extends Error {
  readonly code = 'QRVEND_PACKET_TOO_LARGE';
}

/** The value of a variable byte integer (MQTT's remaining length and property length). */
function varInt(bytes: readonly number[]): number {
  let value = 0;
  for (let k = bytes.length - 1; k >= 0; k -= 1) value = value * 128 + (bytes[k]! & 0x7f);
  return value;
}

function varIntBytes(value: number): number[] {
  const out: number[] = [];
  do {
    const digit = value % 128;
    value = Math.floor(value / 128);
    out.push(value > 0 ? digit | 0x80 : digit);
  } while (value > 0);
  return out;
}

/**
 * The byte stream from the broker, packet by packet (see the file comment). `onOversized` is told
 * the topic and the size of every PUBLISH it cut.
 */
export class PacketSizeFilter extends Transform {
  private state: State = { at: 'fixed' };
  private head: number[] = [];
  /** Where the fixed header being read began in the current chunk (-1: in an earlier one). */
  private headStart = -1;
  /**
   * Start of the bytes of the current chunk that pass unchanged and are not pushed yet: a run of
   * packets within the bound leaves as one slice of the chunk, as if there were no filter.
   */
  private run: number | null = null;
  /** The most bytes this filter held at once (a fixed header, or a cut PUBLISH's topic): for tests. */
  heldHighWater = 0;

  constructor(
    private readonly protocolVersion: number,
    private readonly onOversized: (topic: string, packetBytes: number) => void = () => {},
    private readonly maxPacketBytes = MAX_PACKET_BYTES,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.run = this.state.at === 'fixed' || this.state.at === 'pass' ? 0 : null;
      this.headStart = -1;
      let i = 0;
      while (i < chunk.length) i = this.step(chunk, i);
      // A fixed header not complete yet is held until its size is known.
      const end = this.state.at === 'fixed' && this.head.length > 0 ? Math.max(this.headStart, 0) : chunk.length;
      if (this.run !== null && end > this.run) this.push(chunk.subarray(this.run, end));
      this.run = null;
      done();
    } catch (err) {
      done(err as Error);
    }
  }

  /** Consumes bytes of `chunk` from `i`; returns where it stopped. */
  private step(chunk: Buffer, i: number): number {
    const s = this.state;
    switch (s.at) {
      case 'fixed':
        this.fixedHeader(chunk, i);
        return i + 1;
      case 'pass': {
        const n = Math.min(s.left, chunk.length - i);
        s.left -= n;
        if (s.left === 0) this.state = { at: 'fixed' };
        return i + n;
      }
      case 'skip': {
        const n = Math.min(s.left, chunk.length - i);
        s.left -= n;
        if (s.left === 0) this.back(i + n);
        return i + n;
      }
      case 'publish':
        if (s.consumed >= s.remaining)
          throw new PacketTooLargeError('a PUBLISH from the broker ends inside its header');
        if (s.propsLeft !== null) {
          const n = Math.min(s.propsLeft, chunk.length - i, s.remaining - s.consumed);
          s.propsLeft -= n;
          s.consumed += n;
          if (s.propsLeft === 0) this.cut(s, i + n);
          return i + n;
        }
        s.consumed += 1;
        this.publishHeader(s, chunk[i]!, i + 1);
        return i + 1;
    }
  }

  /** Packets pass again from `next` in the current chunk. */
  private back(next: number): void {
    this.state = { at: 'fixed' };
    this.run = next;
  }

  private fixedHeader(chunk: Buffer, i: number): void {
    const h = this.head;
    if (h.length === 0) this.headStart = i;
    h.push(chunk[i]!);
    this.heldHighWater = Math.max(this.heldHighWater, h.length);
    if (h.length === 1) return;
    if ((chunk[i]! & 0x80) !== 0) {
      if (h.length === 5) throw new PacketTooLargeError('malformed remaining length from the broker');
      return;
    }
    const first = h[0]!;
    const remaining = varInt(h.slice(1));
    const packetBytes = h.length + remaining;
    this.head = [];
    if (packetBytes <= this.maxPacketBytes) {
      if (this.headStart < 0) {
        // Begun in an earlier chunk, so held: it leaves now, and the run goes on after it.
        this.push(Buffer.from(h));
        this.run = i + 1;
      }
      this.state = remaining === 0 ? { at: 'fixed' } : { at: 'pass', left: remaining };
      return;
    }
    if (first >> 4 !== PUBLISH) {
      throw new PacketTooLargeError(
        `a packet of type ${first >> 4} and ${packetBytes} bytes from the broker (limit ${this.maxPacketBytes})`,
      );
    }
    // What passed before this packet leaves; the packet itself never does.
    if (this.run !== null && this.headStart > this.run) this.push(chunk.subarray(this.run, this.headStart));
    this.run = null;
    this.state = {
      at: 'publish',
      first,
      packetBytes,
      remaining,
      consumed: 0,
      kept: [],
      idEnd: null,
      propsLength: [],
      propsLeft: null,
    };
  }

  private publishHeader(s: CutPublish, byte: number, next: number): void {
    if (s.idEnd === null || s.kept.length < s.idEnd) {
      s.kept.push(byte);
      this.heldHighWater = Math.max(this.heldHighWater, s.kept.length);
      if (s.kept.length === 2) s.idEnd = 2 + ((s.kept[0]! << 8) | s.kept[1]!) + (((s.first >> 1) & 0x03) > 0 ? 2 : 0);
      if (s.kept.length === s.idEnd && this.protocolVersion !== 5) this.cut(s, next);
      return;
    }
    // MQTT 5: the properties' length follows the packet id; the properties are skipped.
    s.propsLength.push(byte);
    if ((byte & 0x80) !== 0) {
      if (s.propsLength.length === 4) throw new PacketTooLargeError('malformed property length from the broker');
      return;
    }
    s.propsLeft = varInt(s.propsLength);
    if (s.propsLeft === 0) this.cut(s, next);
  }

  /** Emits the cut PUBLISH (topic, packet id, no properties, the stand-in payload) and skips the rest. */
  private cut(s: CutPublish, next: number): void {
    const header = Buffer.from(s.kept);
    const props = this.protocolVersion === 5 ? Buffer.from([0]) : Buffer.alloc(0);
    const fixed = Buffer.from([s.first, ...varIntBytes(header.length + props.length + STAND_IN_PAYLOAD_BYTES)]);
    this.push(Buffer.concat([fixed, header, props, Buffer.alloc(STAND_IN_PAYLOAD_BYTES)]));
    this.onOversized(
      header.subarray(2, s.idEnd! - (((s.first >> 1) & 0x03) > 0 ? 2 : 0)).toString('utf8'),
      s.packetBytes,
    );
    const left = s.remaining - s.consumed;
    if (left === 0) this.back(next);
    else this.state = { at: 'skip', left };
  }
}

/**
 * Puts a PacketSizeFilter between every socket `client` opens and its parser. Call on a client
 * made with `manualConnect: true`, then `client.connect()`: mqtt.js builds a new stream at every
 * (re)connect and pipes it into its parser, so the filter goes into that pipe. Writes, `end`,
 * `destroy` and the socket's events stay on the socket itself.
 */
export function boundInboundPackets(
  client: MqttClient,
  protocolVersion: number,
  onOversized?: (topic: string, packetBytes: number) => void,
): void {
  // mqtt.js has no option for the stream it parses; `streamBuilder` is its (private) factory.
  const internals = client as unknown as { streamBuilder: (c: MqttClient) => Readable };
  const build = internals.streamBuilder;
  if (typeof build !== 'function')
    throw new Error('mqtt.js no longer has client.streamBuilder: the inbound packet bound cannot be installed');
  internals.streamBuilder = (c) => {
    const stream = build(c);
    const pipe = stream.pipe.bind(stream);
    stream.pipe = <T extends NodeJS.WritableStream>(destination: T, options?: { end?: boolean }): T => {
      const filter = new PacketSizeFilter(protocolVersion, onOversized);
      filter.on('error', (err) => stream.destroy(err));
      pipe(filter as unknown as Writable);
      return filter.pipe(destination, options);
    };
    return stream;
  };
}
