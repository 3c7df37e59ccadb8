/**
 * docs/decisions/fleet-trust.md item 11: every MQTT client of ours announces the Maximum Packet Size in its MQTT 5
 * CONNECT, so a broker never hands it a 200 MB message. What each client really sends is read
 * off the wire: a loopback listener that parses the first packet of each connection (with
 * mqtt-packet, the library mqtt.js is built on) and closes it. The clients are the real ones:
 * the daemon's fleet worker (`qrvend run`), `qrvend relay` (in-process) and `qrvend fleet status`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import mqttPacket, { type IConnectPacket } from 'mqtt-packet';
import { MAX_PACKET_BYTES } from '../../../src/fleet/packet-bound.js';
import { createRig, until } from '../../../rigs/rig.js';
import { silentLogger } from '../../../src/core/log.js';
import { startRelay, validateRelayConfig } from '../../../src/relay/index.js';
import { createTrustKit } from '../../../rigs/relay/trust-kit.js';
import { runCli } from '../operator/run-cli.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

interface ConnectTap {
  url: string;
  /** CONNECT packets received, by client id. */
  connects: IConnectPacket[];
  close(): Promise<void>;
}

async function connectTap(): Promise<ConnectTap> {
  const connects: IConnectPacket[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const parser = mqttPacket.parser({ protocolVersion: 5 });
    parser.on('packet', (packet) => {
      if (packet.cmd === 'connect') connects.push(packet as IConnectPacket);
      socket.destroy();
    });
    parser.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => parser.parse(chunk));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    connects,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const announced = (packets: IConnectPacket[], clientId: RegExp) => packets.find((p) => clientId.test(p.clientId));

test(
  'MQTT 5 CONNECT of the device, the relay and the CLI carries Maximum Packet Size',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const tap = await connectTap();
    t.after(() => tap.close());

    const cli = await runCli(['fleet', 'status', '--url', tap.url, '--protocol', '5', '--connect-timeout', '1000']);
    assert.equal(cli.code, 69, 'the tap never answers: no broker');
    const fromCli = announced(tap.connects, /^qrvend-op-status-/);
    assert.equal(fromCli?.protocolVersion, 5);
    assert.equal(fromCli?.properties?.maximumPacketSize, MAX_PACKET_BYTES);

    const kit = createTrustKit({ machines: [] });
    t.after(() => kit.remove());
    const relay = await startRelay(
      validateRelayConfig(
        { relay: { listen: '127.0.0.1:0', broker: { url: tap.url, protocolVersion: 5 }, ...kit.relayConfig() } },
        'test',
      ),
      silentLogger(),
    );
    try {
      await until(() => announced(tap.connects, /^qrvend-relay-/) !== undefined, 10_000, "the relay's CONNECT");
    } finally {
      await relay.close();
    }
    assert.equal(announced(tap.connects, /^qrvend-relay-/)?.properties?.maximumPacketSize, MAX_PACKET_BYTES);

    const rig = await createRig({ config: { fleet: { url: tap.url, machineId: 'M-CONNECT', protocolVersion: 5 } } });
    t.after(() => rig.close());
    await rig.startAgent();
    await until(() => announced(tap.connects, /^qrvend-M-CONNECT$/) !== undefined, 20_000, "the device's CONNECT");
    const fromDevice = announced(tap.connects, /^qrvend-M-CONNECT$/);
    assert.equal(fromDevice?.protocolVersion, 5);
    assert.equal(fromDevice?.properties?.maximumPacketSize, MAX_PACKET_BYTES);
  },
);
