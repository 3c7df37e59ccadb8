/**
 * The host end of the guest's PL011 UART: QEMU serves the UART as a unix socket chardev and the
 * VMC simulator attaches here, exactly as it attaches to a pty in the bench rig. No socat: the
 * socket is QEMU's own, and each boot of the guest is a new connection (a power cut drops it).
 */
import { createConnection, type Socket } from 'node:net';
import type { ByteLink } from '../../src/mdb/transport/index.js';

export async function connectUart(path: string, timeoutMs: number): Promise<ByteLink> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const socket = await new Promise<Socket>((resolve, reject) => {
        const s = createConnection(path);
        s.once('connect', () => (s.off('error', reject), resolve(s)));
        s.once('error', reject);
      });
      return socketLink(socket, path);
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(
          `the UART socket ${path} did not accept a connection within ${timeoutMs} ms: ${(err as Error).message}`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function socketLink(socket: Socket, path: string): ByteLink {
  let closeHandler: ((reason: string) => void) | null = null;
  let closedByUs = false;
  let ended = false;
  const end = (reason: string) => {
    if (ended) return;
    ended = true;
    if (!closedByUs) closeHandler?.(reason);
  };
  socket.on('error', (err) => end(`socket error: ${err.message}`));
  socket.on('close', () => end('QEMU closed the UART socket'));
  return {
    description: `qemu-uart:${path}`,
    write(data) {
      if (!ended) socket.write(data);
    },
    onData(handler) {
      socket.on('data', handler);
    },
    onClose(handler) {
      closeHandler = handler;
    },
    drain() {
      if (!socket.writableNeedDrain) return Promise.resolve();
      return new Promise((resolve) => {
        const t = setTimeout(resolve, 2000);
        socket.once('drain', () => (clearTimeout(t), resolve()));
      });
    },
    async close() {
      closedByUs = true;
      ended = true;
      socket.destroy();
    },
  };
}
