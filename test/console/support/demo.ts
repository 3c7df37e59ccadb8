/**
 * `npm run console-demo [-- HOST:PORT]`: the console on its embedded default (a SQLite file in a temporary
 * directory) fed by a simulated fleet through an in-process broker on loopback, with nothing
 * else to install: machines sell, one raises and clears an alarm, one goes offline. Prints the
 * URL and a one-off admin password; runs until Ctrl-C.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomInt } from 'node:crypto';
import { silentLogger } from '../../../src/core/log.js';
import { startAedesBroker } from '../../../rigs/broker/index.js';
import { SimulatedMachine } from '../../../rigs/fleet/machine.js';
import { parseConsoleConfig } from '../../../src/console/config.js';
import { startConsole } from '../../../src/console/run.js';
import { putUser } from '../../../src/console/store/accounts.js';

const MACHINES = 12;

export async function runConsoleDemo(listen: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-console-demo-'));
  const broker = await startAedesBroker();
  const settings = parseConsoleConfig({
    broker: { url: broker.url, protocol: '4' },
    db: join(dir, 'console.sqlite'),
    listen,
    subscription: 'plain',
    instance: 'demo',
  });
  const app = await startConsole(settings, silentLogger());
  const password = randomBytes(9).toString('base64url');
  await putUser(app.store.db, 'demo', 'admin', password);
  const machines = await Promise.all(
    Array.from({ length: MACHINES }, (_, i) =>
      SimulatedMachine.connect({
        url: broker.url,
        machineId: `demo-${String(i + 1).padStart(2, '0')}`,
        version: '1.4.0',
      }),
    ),
  );
  process.stdout.write(
    `qrvend console demo: ${app.web.url}  (account demo, password ${password})\n` +
      `${MACHINES} simulated machines are selling; Ctrl-C ends the demo and removes its database.\n`,
  );
  let tick = 0;
  const timer = setInterval(() => {
    tick++;
    const m = machines[randomInt(machines.length)]!;
    const amount = `${randomInt(1, 4)}.${String(randomInt(0, 20) * 5).padStart(2, '0')}`;
    m.sale({ amount, products: [{ item: randomInt(1, 40), price: amount, outcome: 'success' }] });
    if (tick === 10) void machines[1]!.alarm('BOARD_SILENT', 'raised', 'no line from the board for 15 s');
    if (tick === 40) void machines[1]!.alarm('BOARD_SILENT', 'cleared');
    // A machine that loses its network: the broker publishes its last will.
    if (tick === 25) machines[2]!.client.stream.destroy();
  }, 1500);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(timer);
  for (const m of machines) m.client.end(true);
  await app.close();
  await broker.close();
  rmSync(dir, { recursive: true, force: true });
  return 0;
}

// Not a test: run as a script (it lives beside the tests because the in-process broker and the
// simulated machines are test rigs, never shipped in the product).
if (process.argv[1]?.endsWith('/support/demo.js')) {
  process.exitCode = await runConsoleDemo(process.argv[2] ?? '127.0.0.1:8480');
}
