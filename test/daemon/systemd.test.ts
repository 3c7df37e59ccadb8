/**
 * The real daemon under a (fake) systemd: READY when the reader is enabled, watchdog pings paced
 * by the main thread, STATUS on availability changes, STOPPING at SIGTERM. `systemd-notify` is a
 * recording script first on PATH; the daemon sends through its payment worker (notify-relay.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRig, until } from '../../src/sim/rig.js';

test('READY at C,1 naming the daemon, watchdog pings, STATUS, STOPPING at SIGTERM', { timeout: 40_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-systemd-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const record = join(dir, 'calls.log');
  writeFileSync(join(dir, 'systemd-notify'), `#!/bin/sh\necho "$*" >> '${record}'\n`);
  chmodSync(join(dir, 'systemd-notify'), 0o755);
  const saved = { PATH: process.env.PATH, NOTIFY_SOCKET: process.env.NOTIFY_SOCKET, WATCHDOG_USEC: process.env.WATCHDOG_USEC };
  // The rig gives the daemon this process's environment: systemd's variables, a 400 ms watchdog.
  Object.assign(process.env, { PATH: `${dir}:${saved.PATH ?? '/usr/bin:/bin'}`, NOTIFY_SOCKET: '/run/systemd/notify-test', WATCHDOG_USEC: '400000' });
  let rig: Awaited<ReturnType<typeof createRig>>;
  try {
    rig = await createRig();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
  const calls = () => (existsSync(record) ? readFileSync(record, 'utf8').split('\n').filter(Boolean) : []);
  try {
    const agent = await rig.startAgent();
    await until(() => calls().some((c) => c.includes('READY=1')), 10_000, 'READY=1');
    await until(() => calls().filter((c) => c.includes('WATCHDOG=1')).length >= 3, 10_000, 'three watchdog pings');
    assert.ok(calls().some((c) => c.includes('STATUS=reader enabled')), JSON.stringify(calls()));
    const ready = calls().find((c) => c.includes('READY=1'))!;
    assert.match(ready, new RegExp(`--pid=${agent.pid}\\b`), 'READY names the daemon as the main process');
    agent.child.kill('SIGTERM');
    assert.deepEqual(await agent.exited, { code: 0, signal: null });
    // Started before the daemon exited (it never waits behind a watchdog ping in flight); the
    // recording script itself may still be appending its line.
    await until(() => calls().some((c) => c.includes('STOPPING=1')), 5_000, 'STOPPING=1');
  } finally {
    await rig.close();
  }
});
