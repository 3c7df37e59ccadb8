#!/usr/bin/env node
/**
 * Compiles the project's own small C programs with the machine's C compiler (the toolchain that
 * better-sqlite3 builds with; `CC` chooses another). Run by `npm ci` (prepare), `npm run build`
 * and `npm test`; a target newer than its source is left alone.
 *
 *   native/pty-relay.c     -> dist/src/native/qrvend-pty            the pty pair (simulators, tests, serial trace)
 *   native/notify-helper.c -> dist/src/native/qrvend-notify         sd_notify for the main thread (daemon)
 *   native/malloc-trim.c   -> dist/src/native/qrvend-trim.node      malloc_trim for the daemon (Node-API addon,
 *                                                                    with the running Node's headers)
 *   native/gpio-chardev.c  -> dist/src/native/qrvend-gpio.node      the kernel's GPIO character device (Node-API addon)
 *   test/native/fail-io.c  -> dist/test/native/libqrvend-failio.so  write/sync failure shim (tests only)
 *   test/native/notify-sink.c -> dist/test/native/notify-sink       systemd's end of NOTIFY_SOCKET (tests only)
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cc = process.env.CC || 'cc';
// Node-API's headers come with Node (include/node beside bin/node); node_api.h is the same C for every architecture.
const nodeInclude = join(dirname(process.execPath), '..', 'include', 'node');
const targets = [
  { src: 'native/pty-relay.c', out: 'dist/src/native/qrvend-pty', flags: [] },
  { src: 'native/notify-helper.c', out: 'dist/src/native/qrvend-notify', flags: [] },
  // The daemon runs without it (no trimming, more resident memory) where Node came without its headers.
  {
    src: 'native/malloc-trim.c',
    out: 'dist/src/native/qrvend-trim.node',
    flags: ['-shared', '-fPIC', '-I', nodeInclude],
    needs: join(nodeInclude, 'node_api.h'),
    without: 'no malloc trimming',
  },
  // Without it the chardev GPIO backend is unavailable (logged; payments go on, docs/devices.md).
  {
    src: 'native/gpio-chardev.c',
    out: 'dist/src/native/qrvend-gpio.node',
    flags: ['-shared', '-fPIC', '-I', nodeInclude],
    needs: join(nodeInclude, 'node_api.h'),
    without: 'no chardev GPIO backend',
  },
  { src: 'test/native/notify-sink.c', out: 'dist/test/native/notify-sink', flags: [] },
  { src: 'test/native/fail-io.c', out: 'dist/test/native/libqrvend-failio.so', flags: ['-shared', '-fPIC', '-ldl'] },
];

for (const t of targets) {
  const src = join(root, t.src);
  const out = join(root, t.out);
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(src).mtimeMs) continue;
  if (t.needs !== undefined && !existsSync(t.needs)) {
    console.error(
      `native/build.mjs: ${t.out} not built: ${t.needs} is missing (Node's headers; the agent runs with ${t.without})`,
    );
    continue;
  }
  mkdirSync(dirname(out), { recursive: true });
  const args = ['-O2', '-Wall', '-Wextra', '-o', out, src, ...t.flags];
  try {
    execFileSync(cc, args, { stdio: ['ignore', 'inherit', 'inherit'], timeout: 60_000 });
  } catch (err) {
    const why =
      err && err.code === 'ENOENT'
        ? `no C compiler "${cc}" (install a C/C++ toolchain, e.g. build-essential; better-sqlite3 needs it too)`
        : `${cc} failed`;
    console.error(`native/build.mjs: cannot build ${t.out} from ${t.src}: ${why}`);
    process.exit(1);
  }
}
