/**
 * The emulated Pi: qemu-system-aarch64 or qemu-system-arm (-M virt, TCG; arch.ts) booting the cached image through a
 * copy-on-write overlay. The PL011 (the MDB board's line, /dev/ttyAMA0 in the guest) is a unix
 * socket the VMC simulator connects to; the console is virtio (hvc0) into serial.log; the display
 * is virtio-gpu (/dev/fb0), read back with the monitor's screendump. Network: QEMU user net with
 * restrict=on: ssh and the Start endpoint forwarded from 127.0.0.1, the gateway simulator and the
 * fleet broker and the update repository reached through one guestfwd each (a bridge process per connection), nothing
 * else.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FieldArch } from './arch.js';

/**
 * Run by QEMU for each guest connection to the gateway, the broker or the repository (a `tcp:` target takes only one).
 */
const BRIDGE = fileURLToPath(new URL('./gateway-bridge.js', import.meta.url));

/** The gateway as the guest sees it (guestfwd to the simulator on the host). */
export const GUEST_GATEWAY = { host: '10.0.2.100', port: 8090 };
/** The fleet broker (mosquitto, TLS) as the guest sees it (guestfwd to its loopback port on the host). */
export const GUEST_BROKER = { host: '10.0.2.101', port: 8883 };
/** The update repository (artifact-server.ts, HTTPS) as the guest sees it. */
export const GUEST_ARTIFACTS = { host: '10.0.2.102', port: 8443 };
/** The Start endpoint's port inside the guest. */
export const GUEST_START_PORT = 8091;

export interface QemuOptions {
  arch: FieldArch;
  imageDir: string;
  runDir: string;
  overlay: string;
  sshPort: number;
  startPort: number;
  gatewayPort: number;
  brokerPort: number;
  artifactPort: number;
}

export interface Qemu {
  readonly uartSocket: string;
  readonly serialLog: string;
  readonly child: ChildProcess;
  /** SIGKILL: the power cut. Resolves once the process is gone. */
  kill(): Promise<void>;
  screendump(file: string, timeoutMs: number): Promise<void>;
  alive(): boolean;
}

export function startQemu(o: QemuOptions): Qemu {
  const uartSocket = join(o.runDir, 'uart.sock');
  const monitorSocket = join(o.runDir, 'monitor.sock');
  const serialLog = join(o.runDir, 'serial.log');
  for (const s of [uartSocket, monitorSocket]) rmSync(s, { force: true });
  // QEMU's option syntax splits on commas: a path with one would be read as another option.
  for (const p of [o.runDir, o.imageDir, o.overlay, BRIDGE, process.execPath])
    if (p.includes(',')) throw new Error(`qemu options cannot carry the path "${p}" (it contains a comma)`);
  const net = [
    'user,id=n0,restrict=on',
    `hostfwd=tcp:127.0.0.1:${o.sshPort}-:22`,
    `hostfwd=tcp:127.0.0.1:${o.startPort}-:${GUEST_START_PORT}`,
    `guestfwd=tcp:${GUEST_GATEWAY.host}:${GUEST_GATEWAY.port}-cmd:${process.execPath} ${BRIDGE} ${o.gatewayPort}`,
    `guestfwd=tcp:${GUEST_BROKER.host}:${GUEST_BROKER.port}-cmd:${process.execPath} ${BRIDGE} ${o.brokerPort}`,
    `guestfwd=tcp:${GUEST_ARTIFACTS.host}:${GUEST_ARTIFACTS.port}-cmd:${process.execPath} ${BRIDGE} ${o.artifactPort}`,
  ].join(',');
  const args = [
    ...o.arch.machine,
    '-smp',
    '2',
    '-m',
    '1024',
    '-nodefaults',
    '-no-user-config',
    '-display',
    'none',
    '-kernel',
    join(o.imageDir, 'vmlinuz'),
    '-initrd',
    join(o.imageDir, 'initrd.img'),
    // console=hvc0: without it the kernel and a getty take ttyAMA0, the board's line.
    '-append',
    'root=/dev/vda rw console=hvc0 vt.global_cursor_default=0 net.ifnames=0',
    '-drive',
    `if=none,id=hd0,file=${o.overlay},format=qcow2`,
    '-device',
    'virtio-blk-pci,drive=hd0',
    '-netdev',
    net,
    // romfile= : no PXE option ROM (the kernel boots directly), so the host needs no ipxe-qemu.
    '-device',
    'virtio-net-pci,netdev=n0,romfile=',
    '-device',
    'virtio-rng-pci',
    '-device',
    'virtio-serial-pci',
    '-chardev',
    `file,id=con0,path=${serialLog},append=on`,
    '-device',
    'virtconsole,chardev=con0',
    '-chardev',
    `socket,id=uart0,path=${uartSocket},server=on,wait=off`,
    '-serial',
    'chardev:uart0',
    '-device',
    'virtio-gpu-pci',
    '-monitor',
    `unix:${monitorSocket},server=on,wait=off`,
  ];
  // Never the caller's stdout: a background qemu holding it keeps a pipe open forever.
  const out = openSync(join(o.runDir, 'qemu.log'), 'a');
  // setpriv --pdeathsig: the kernel kills qemu if the harness dies without its teardown (kill -9,
  // a crash), so no emulated Pi outlives the run that started it.
  const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', o.arch.qemu, ...args], {
    stdio: ['ignore', out, out],
    detached: false,
  });
  closeSync(out);
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', () => {});
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    uartSocket,
    serialLog,
    child,
    alive,
    async kill() {
      if (alive()) child.kill('SIGKILL');
      await gone;
    },
    async screendump(file, timeoutMs) {
      rmSync(file, { force: true });
      await hmp(monitorSocket, `screendump ${file}`, timeoutMs);
      const deadline = Date.now() + timeoutMs;
      while (!existsSync(file) || readFileSync(file).length === 0) {
        if (Date.now() > deadline) throw new Error(`screendump wrote no ${file} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
  };
}

/** One human-monitor command over the unix socket; resolves after the next prompt. */
function hmp(socketPath: string, command: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = createConnection(socketPath);
    let buf = '';
    let sent = false;
    const timer = setTimeout(
      () => (s.destroy(), reject(new Error(`monitor: no answer to "${command}" within ${timeoutMs} ms`))),
      timeoutMs,
    );
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      buf += d;
      if (!sent && buf.includes('(qemu)')) {
        sent = true;
        buf = '';
        s.write(`${command}\n`);
      } else if (sent && buf.includes('(qemu)')) {
        clearTimeout(timer);
        s.end();
        resolve(buf);
      }
    });
    s.on('error', (err) => (clearTimeout(timer), reject(new Error(`monitor: ${err.message}`))));
  });
}
