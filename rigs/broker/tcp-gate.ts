/**
 * A TCP gate in front of a broker, loopback only, for outages the tests and the benchmark control
 * from outside the broker: `open` forwards both ways; `closed` drops every connection through the
 * gate and refuses new ones (the device sees the broker gone while test clients that connect to
 * the broker directly stay subscribed); `stalled` keeps the connections but forwards nothing
 * (a hung broker: TCP up, no answers). setDelays() holds every chunk for a while in one
 * direction or both (a slow cellular link), keeping the order.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type GateMode = 'open' | 'closed' | 'stalled';

export interface TcpGate {
  readonly port: number;
  readonly url: string;
  mode: GateMode;
  setMode(mode: GateMode): void;
  /** toClientMs: broker -> client (down, to a machine); toBrokerMs: client -> broker (up). */
  setDelays(delays: { toClientMs: number; toBrokerMs: number }): void;
  close(): Promise<void>;
}

export async function startTcpGate(target: { host?: string; port: number }): Promise<TcpGate> {
  const pairs = new Set<{ a: Socket; b: Socket }>();
  let mode: GateMode = 'open';
  let delays = { toClientMs: 0, toBrokerMs: 0 };
  const forward = (to: Socket, chunk: Buffer, ms: number) => {
    if (ms <= 0) to.write(chunk);
    // Timers with one delay fire in the order they were set: the stream keeps its order.
    else setTimeout(() => to.destroyed || to.write(chunk), ms);
  };
  const server: Server = createServer((a) => {
    if (mode === 'closed') {
      a.destroy();
      return;
    }
    const b = createConnection({ host: target.host ?? '127.0.0.1', port: target.port });
    const pair = { a, b };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      a.destroy();
      b.destroy();
    };
    a.on('error', end).on('close', end);
    b.on('error', end).on('close', end);
    a.on('data', (chunk: Buffer) => {
      if (mode === 'open') forward(b, chunk, delays.toBrokerMs);
    });
    b.on('data', (chunk: Buffer) => {
      if (mode === 'open') forward(a, chunk, delays.toClientMs);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('tcp gate: no address');
  const gate: TcpGate = {
    port: address.port,
    url: `mqtt://127.0.0.1:${address.port}`,
    get mode() {
      return mode;
    },
    set mode(m: GateMode) {
      gate.setMode(m);
    },
    setDelays(d) {
      delays = { ...d };
    },
    setMode(m) {
      mode = m;
      if (m === 'closed') for (const p of [...pairs]) (p.a.destroy(), p.b.destroy());
    },
    async close() {
      for (const p of [...pairs]) (p.a.destroy(), p.b.destroy());
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return gate;
}
