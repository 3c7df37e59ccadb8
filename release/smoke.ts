/**
 * Loads the staged release's native modules with its own Node: natively for amd64, through
 * qemu-user for arm64/armhf (qemu-user-static, the cross toolchain's libraries as the target's
 * /lib). Catches a module built for the wrong CPU or Node ABI before anything is shipped.
 * Skipped, with a line saying so, when the emulator is not installed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ReleaseTarget } from './targets.js';
import { run } from './run.js';

const QEMU: Record<string, string> = { arm64: 'qemu-aarch64-static', armhf: 'qemu-arm-static' };

/** Requires each compiled addon through its package (as the agent does), then prints the version. */
const PROBE = `
const Database = require('better-sqlite3');
const db = new Database(':memory:');
const sqlite = db.prepare('select sqlite_version() as v').get().v;
db.close();
require('rpio');
const bindings = require('@serialport/bindings-cpp');
if (typeof bindings.autoDetect !== 'function') throw new Error('serialport bindings incomplete');
// The project's own addon (native/malloc-trim.c), by its path in the release as the daemon loads it.
const trimmed = require('./dist/src/native/qrvend-trim.node').trim();
if (typeof trimmed !== 'boolean') throw new Error('qrvend-trim.node: trim() did not answer');
// The GPIO addon (native/gpio-chardev.c) loads; a missing chip answers ENOENT, not a crash.
const gpio = require('./dist/src/native/qrvend-gpio.node');
try { gpio.chipInfo('/nonexistent/gpiochip'); throw new Error('qrvend-gpio.node: a missing chip did not fail'); }
catch (err) { if (err.code !== 'ENOENT') throw err; }
console.log(process.arch + ' node ' + process.version + ' abi ' + process.versions.modules + \
' sqlite ' + sqlite + ' malloc_trim ok gpio ok');
`;

export async function smokeTest(optDir: string, target: ReleaseTarget): Promise<string> {
  const node = join(optDir, 'node/bin/node');
  // serialport's bindings sit under serialport/node_modules; give require both places.
  const env = {
    ...process.env,
    NODE_PATH: [join(optDir, 'node_modules'), join(optDir, 'node_modules/serialport/node_modules')].join(':'),
  };
  if (target.toolchainPrefix === null) {
    return (await run(node, ['-e', PROBE], { cwd: optDir, env, capture: true, timeoutMs: 120_000 })).trim();
  }
  const qemu = QEMU[target.deb]!;
  const sysroot = `/usr/${target.toolchainPrefix}`;
  const onPath = await run('sh', ['-c', 'command -v "$1" || true', 'sh', qemu], { capture: true });
  if (onPath.trim() === '' || !existsSync(sysroot))
    return `skipped (${qemu} or ${sysroot} missing: apt-get install qemu-user-static)`;
  return (
    await run(qemu, ['-L', sysroot, node, '-e', PROBE], { cwd: optDir, env, capture: true, timeoutMs: 300_000 })
  ).trim();
}
