/**
 * TCP_NODELAY on the device's broker connection, set again at every reconnect
 * (real mqtt.js client, real aedes broker on loopback).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { PassThrough } from 'node:stream';
import { connect } from 'mqtt';
import { startAedesBroker } from '../../rigs/broker/index.js';
import { keepNoDelay, setNoDelayOn } from '../../src/fleet/no-delay.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

test(
  'a TCP or TLS socket gets TCP_NODELAY; another stream (a WebSocket duplex) is left alone',
  { timeout: 5_000 },
  () => {
    assert.ok(TLSSocket.prototype instanceof Socket, 'mqtts:// streams are net.Sockets too');
    const calls: boolean[] = [];
    const socket = new Socket();
    socket.setNoDelay = (v?: boolean) => (calls.push(v ?? true), socket);
    try {
      assert.equal(setNoDelayOn(socket), true);
      assert.deepEqual(calls, [true]);
    } finally {
      socket.destroy();
    }
    assert.equal(setNoDelayOn(new PassThrough()), false);
    assert.equal(setNoDelayOn(null), false);
  },
);

test(
  'every connection the client makes, the first and each reconnect, has TCP_NODELAY',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const broker = await startAedesBroker();
    const original = Socket.prototype.setNoDelay;
    const noDelay = new Set<Socket>();
    Socket.prototype.setNoDelay = function (this: Socket, v?: boolean) {
      if (v !== false) noDelay.add(this);
      return original.call(this, v);
    };
    const client = connect(broker.url, { protocolVersion: 4, reconnectPeriod: 50, connectTimeout: 5_000 });
    try {
      keepNoDelay(client);
      const connected = () => new Promise<void>((resolve) => client.once('connect', () => setImmediate(resolve)));
      await connected();
      const first = client.stream;
      assert.ok(first instanceof Socket);
      assert.ok(noDelay.has(first), 'the first connection');
      const again = connected();
      first.destroy();
      await again;
      assert.notEqual(client.stream, first, 'a new stream after the reconnect');
      assert.ok(noDelay.has(client.stream as Socket), 'the reconnected stream');
    } finally {
      Socket.prototype.setNoDelay = original;
      await client.endAsync(true);
      await broker.close();
    }
  },
);
