/**
 * TCP_NODELAY on every broker connection qrvend makes (the device's fleet worker, the operator CLI,
 * the Start relay, the simulators). mqtt.js leaves Nagle's algorithm on, so a small reply written
 * while an earlier packet is still unacknowledged waits for the peer's delayed ACK: a command round
 * trip measured 44 to 88 ms at p50 against mosquitto with Nagle on any hop, about 0.5 ms with it off
 * on the broker and both clients (docs/fleet.md).
 *
 * mqtt.js builds a new stream at every (re)connect and keeps it in `client.stream`; `connect` is
 * emitted once CONNACK arrived on that stream, before any command can come in. A mqtt(s):// stream
 * is a net.Socket (tls.TLSSocket is one); a ws(s):// stream is a Duplex over a WebSocket, whose
 * library (ws) already sets TCP_NODELAY on its own socket.
 */
import { Socket } from 'node:net';

/** Turns Nagle off when `stream` is a TCP (or TLS) socket; true when it did. */
export function setNoDelayOn(stream: unknown): boolean {
  if (!(stream instanceof Socket)) return false;
  stream.setNoDelay(true);
  return true;
}

/** Keeps TCP_NODELAY on every connection `client` makes (register before other `connect` listeners). */
export function keepNoDelay(client: {
  on(event: 'connect', listener: () => void): unknown;
  readonly stream: unknown;
}): void {
  client.on('connect', () => void setNoDelayOn(client.stream));
}
