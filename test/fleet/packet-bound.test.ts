/**
 * The inbound packet bound of every MQTT client of ours (docs/decisions/fleet-trust.md item 11), on the byte level: a
 * stream of real MQTT packets (made by mqtt-packet, the library mqtt.js parses with) is fed to
 * PacketSizeFilter in socket-sized chunks, and what comes out is parsed again. Packets within the
 * bound come out byte for byte; an 8 MiB PUBLISH comes out as its topic and packet id with a
 * payload one byte over the contract's limit, without the filter ever holding more than its
 * header; a non-PUBLISH packet over the bound ends the stream with an error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import mqttPacket, { type Packet, type IPublishPacket } from 'mqtt-packet';
import { MAX_PAYLOAD_BYTES } from '../../src/fleet/contract/index.js';
import {
  MAX_PACKET_BYTES,
  PacketSizeFilter,
  STAND_IN_PAYLOAD_BYTES,
  maxPacketProperties,
} from '../../src/fleet/packet-bound.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const BIG = 8 * 1024 * 1024;
const CHUNK = 64 * 1024;

function publish(topic: string, payload: Buffer, extra: Partial<IPublishPacket> = {}): IPublishPacket {
  return { cmd: 'publish', topic, payload, qos: 1, messageId: 7, retain: true, dup: false, ...extra } as IPublishPacket;
}

/**
 * Feeds `bytes` in CHUNK pieces (or the sizes `sizes` gives in turn);
 * resolves with the output parsed again, or the error.
 */
async function run(
  protocolVersion: 4 | 5,
  bytes: Buffer,
  sizes: (n: number) => number = () => CHUNK,
): Promise<{
  packets: Packet[];
  error: Error | null;
  filter: PacketSizeFilter;
  cut: [string, number][];
  output: Buffer;
}> {
  const cut: [string, number][] = [];
  const filter = new PacketSizeFilter(protocolVersion, (topic, size) => cut.push([topic, size]));
  const parser = mqttPacket.parser({ protocolVersion });
  const packets: Packet[] = [];
  parser.on('packet', (p) => packets.push(p));
  parser.on('error', (err) => assert.fail(`the filter's output did not parse: ${err.message}`));
  const out: Buffer[] = [];
  filter.on('data', (b: Buffer) => {
    out.push(b);
    parser.parse(b);
  });
  const error = await new Promise<Error | null>((resolve) => {
    filter.on('error', resolve);
    filter.on('finish', () => resolve(null));
    for (let i = 0, n = 0; i < bytes.length; n += 1) {
      const size = sizes(n);
      filter.write(bytes.subarray(i, i + size));
      i += size;
    }
    filter.end();
  });
  return { packets, error, filter, cut, output: Buffer.concat(out) };
}

for (const protocolVersion of [4, 5] as const) {
  test(
    `MQTT ${protocolVersion === 5 ? '5' : '3.1.1'}: small packets pass unchanged; an 8 MiB ` +
      `PUBLISH is cut to its header and a stand-in payload, held no more than its header`,
    { timeout: TEST_DEADLINE_MS },
    async () => {
      const gen = (p: Packet) => mqttPacket.generate(p, { protocolVersion });
      const small = publish('qrvend/m2/status', Buffer.from('{"online":false}'));
      const atBound = publish('qrvend/m3/status', Buffer.alloc(MAX_PAYLOAD_BYTES, 0x41), {
        qos: 0,
        messageId: undefined,
        retain: false,
      });
      const big = publish(
        'qrvend/m1/status',
        Buffer.alloc(BIG, 0x7b),
        protocolVersion === 5 ? { properties: { userProperties: { a: 'b' }, contentType: 'application/json' } } : {},
      );
      const ping: Packet = { cmd: 'pingresp' };
      const bytes = Buffer.concat([gen(small), gen(big), gen(atBound), gen(ping), gen(small)]);

      const { packets, error, filter, cut } = await run(protocolVersion, bytes);
      assert.equal(error, null);
      assert.deepEqual(
        packets.map((p) => p.cmd),
        ['publish', 'publish', 'publish', 'pingresp', 'publish'],
      );
      const [first, cutOne, third, , last] = packets as IPublishPacket[];
      assert.deepEqual(first!.payload, small.payload);
      assert.deepEqual(last!.payload, small.payload);
      assert.deepEqual(
        (third!.payload as Buffer).length,
        MAX_PAYLOAD_BYTES,
        'a payload at the contract limit still passes',
      );
      assert.equal(cutOne!.topic, 'qrvend/m1/status');
      assert.equal(cutOne!.messageId, 7, 'the packet id stays: mqtt.js acknowledges it');
      assert.equal(cutOne!.qos, 1);
      assert.equal(cutOne!.retain, true);
      assert.equal((cutOne!.payload as Buffer).length, STAND_IN_PAYLOAD_BYTES);
      assert.ok((cutOne!.payload as Buffer).length > MAX_PAYLOAD_BYTES, 'every handler drops it by size');
      assert.deepEqual(cut, [['qrvend/m1/status', gen(big).length]]);
      assert.ok(filter.heldHighWater < 64, `held ${filter.heldHighWater} bytes at most`);
    },
  );
}

for (const protocolVersion of [4, 5] as const) {
  test(
    `MQTT ${protocolVersion === 5 ? '5' : '3.1.1'}: fixed headers, ` +
      `topics and properties split over chunks of 1 to 13 bytes`,
    { timeout: TEST_DEADLINE_MS },
    async () => {
      const gen = (p: Packet) => mqttPacket.generate(p, { protocolVersion });
      const within = [
        publish('qrvend/m2/status', Buffer.from('{"online":false}')),
        publish('qrvend/m3/events', Buffer.alloc(20_000, 0x61), { qos: 0, messageId: undefined, retain: false }),
        { cmd: 'pingresp' } as Packet,
        publish('qrvend/m4/replies', Buffer.from('{}'), { qos: 1, messageId: 9 }),
      ];
      const sizes = (n: number) => 1 + (n % 13);
      // Only packets within the bound: the same bytes leave, in the same order.
      const plain = Buffer.concat(within.map(gen));
      const passed = await run(protocolVersion, plain, sizes);
      assert.equal(passed.error, null);
      assert.ok(passed.output.equals(plain), 'packets within the bound pass byte for byte');

      const over = publish(
        'qrvend/m1/status',
        Buffer.alloc(300_000, 0x7b),
        protocolVersion === 5 ? { properties: { userProperties: { k: 'v'.repeat(300) } } } : {},
      );
      const mixed = Buffer.concat([gen(within[0]!), gen(over), ...within.slice(1).map(gen), gen(over)]);
      const { packets, error, cut } = await run(protocolVersion, mixed, sizes);
      assert.equal(error, null);
      assert.deepEqual(
        packets.map((p) => (p.cmd === 'publish' ? `${p.topic}:${(p.payload as Buffer).length}` : p.cmd)),
        [
          'qrvend/m2/status:16',
          `qrvend/m1/status:${STAND_IN_PAYLOAD_BYTES}`,
          'qrvend/m3/events:20000',
          'pingresp',
          'qrvend/m4/replies:2',
          `qrvend/m1/status:${STAND_IN_PAYLOAD_BYTES}`,
        ],
      );
      assert.equal(cut.length, 2);
    },
  );
}

test(
  'a packet that is not a PUBLISH over the bound ends the stream with ' +
    'an error; the bound is a whole contract payload plus headers',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    // A SUBACK with 100,000 granted QoS bytes: no broker of ours sends that.
    const suback = mqttPacket.generate({ cmd: 'suback', messageId: 1, granted: new Array(100_000).fill(1) } as Packet);
    const { error } = await run(4, suback);
    assert.match(error?.message ?? '', /a packet of type 9 and \d+ bytes from the broker/);
    assert.equal(
      (error as { code?: string }).code,
      'QRVEND_PACKET_TOO_LARGE',
      'mqtt.js reports stream errors that carry a code',
    );

    assert.ok(MAX_PACKET_BYTES > MAX_PAYLOAD_BYTES + 1024);
    assert.deepEqual(maxPacketProperties(5), { maximumPacketSize: MAX_PACKET_BYTES });
    assert.deepEqual(maxPacketProperties(5, { sessionExpiryInterval: 60 }), {
      sessionExpiryInterval: 60,
      maximumPacketSize: MAX_PACKET_BYTES,
    });
    assert.equal(maxPacketProperties(4), undefined, 'MQTT 3.1.1 has no properties');
  },
);
