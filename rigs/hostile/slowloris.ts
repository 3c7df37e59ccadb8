/**
 * A slow-header attacker for tests and the benchmark (docs/decisions/hardening.md item 1), loopback only: `count`
 * connections from `localAddress` that each send a Start request head one byte every `byteEveryMs`
 * and never finish it, reconnecting whenever the server cuts them. Bounded: stop() ends it, and it
 * refuses any target that is not a loopback address.
 */
import { connect, type Socket } from 'node:net';

export interface SlowlorisOptions {
  host: string;
  port: number;
  /** A 127.x.y.z address of this machine (Linux routes all of 127/8 to loopback). */
  localAddress: string;
  count: number;
  byteEveryMs: number;
}

export interface Slowloris {
  /** Connections the attacker opened so far (first ones and reconnects). */
  readonly opened: number;
  stop(): Promise<void>;
}

const HEAD =
  'POST /payment/v2/transactions/Gateway/x/start HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Slow: ' +
  'a'.repeat(4000);

export function startSlowloris(options: SlowlorisOptions): Slowloris {
  if (!/^127\./.test(options.host) || !/^127\./.test(options.localAddress))
    throw new Error('the slowloris attacker only targets loopback');
  const sockets = new Set<Socket>();
  let stopped = false;
  let opened = 0;

  const open = (): void => {
    if (stopped) return;
    opened += 1;
    const socket = connect({ host: options.host, port: options.port, localAddress: options.localAddress });
    sockets.add(socket);
    let sent = 0;
    let timer: NodeJS.Timeout | null = null;
    const trickle = () => {
      if (stopped || socket.destroyed) return;
      socket.write(HEAD[sent % HEAD.length]!);
      sent += 1;
      timer = setTimeout(trickle, options.byteEveryMs);
    };
    socket.on('connect', trickle);
    socket.on('data', () => {}); // the server's 408 or 400: read and ignored
    socket.on('error', () => {});
    socket.on('close', () => {
      if (timer !== null) clearTimeout(timer);
      sockets.delete(socket);
      // Reconnect when cut, a little later so a refused connection does not spin.
      if (!stopped) setTimeout(open, 20);
    });
  };
  for (let i = 0; i < options.count; i += 1) open();

  return {
    get opened() {
      return opened;
    },
    async stop() {
      stopped = true;
      const closing = [...sockets].map(
        (s) =>
          new Promise<void>((resolve) => (s.destroyed ? resolve() : (s.once('close', () => resolve()), s.destroy()))),
      );
      await Promise.all(closing);
    },
  };
}
