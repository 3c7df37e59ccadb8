/**
 * One guest connection to the gateway (or the fleet broker), carried to the simulator (or
 * mosquitto) on the host's loopback. QEMU runs
 * this per connection (`guestfwd=...-cmd:node gateway-bridge.js PORT`) with the guest's TCP stream
 * on stdin/stdout. A `tcp:` guestfwd target would be a single chardev connection made once at QEMU
 * start: the first HTTP connection works, every later one hangs.
 */
import { createConnection } from 'node:net';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  process.stderr.write(`gateway-bridge: expected a port, got "${process.argv[2] ?? ''}"\n`);
  process.exit(64);
}
const upstream = createConnection({ host: '127.0.0.1', port });
process.stdin.pipe(upstream);
upstream.pipe(process.stdout);
upstream.on('error', () => process.exit(1));
upstream.on('close', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
