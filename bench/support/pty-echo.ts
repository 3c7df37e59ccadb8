/**
 * The smallest possible "reader" on the agent end of the pty, in its own process: it answers every
 * vend request line with its approval at once, with the same serialport binding and line framing as
 * the daemon. The vend latency measured against it is the floor set by the measuring apparatus
 * (VMC simulator, pty relay, serialport, two event loops), with no payment logic at all.
 *
 * Usage (forked): pty-echo.js <agent pty path>; sends {type:'ready'} over IPC once the port is open.
 */
import { LineFramer, openSerialLink } from '../../src/mdb/transport/index.js';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: pty-echo.js <pty path>');
const link = await openSerialLink({ path, baudRate: 115200 });
const framer = new LineFramer(256, {
  // Everything but a vend request (polls, status, vend results) needs no answer here.
  onLine: (line) => {
    const m = /^c,STATUS,VEND,([^,]+),/.exec(line);
    if (m) link.write(`C,VEND,${m[1]}\r\n`);
  },
  onOverlong: () => {},
});
link.onData((chunk) => framer.push(chunk));
// Enable the reader and open a session, as a host would, so the simulator takes selections.
link.write('C,1\r\n');
process.on('message', (m: { type: string; funds?: number }) => {
  if (m.type === 'start') link.write(`C,START,${m.funds}\r\n`);
  if (m.type === 'stop') void link.close().then(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready' });
