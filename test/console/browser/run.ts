/**
 * `npm run console-test`: the console in Debian's chromium against a real agent through
 * mosquitto (console-browser.ts), on SQLite and then on a PostgreSQL server the run starts in a
 * temporary directory; the messages the database cannot store (unstorable.ts); then the faults
 * (faults.ts: a broker restart on each database, a PostgreSQL restart on the PostgreSQL pass).
 * Skips, saying why, where chromium, mosquitto or PostgreSQL is missing (`npm test` needs none of
 * them). QRVEND_CONSOLE_SCREENSHOTS=DIR keeps a screenshot of each page (the SQLite run);
 * docs/console.md shows them from docs/console/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MOSQUITTO_BIN_DEFAULT } from '../../../rigs/broker/mosquitto-broker.js';
import { postgresBinDir, startPostgres } from '../support/postgres.js';

const file = fileURLToPath(new URL('./console-browser.js', import.meta.url));
const routeFile = fileURLToPath(new URL('./route-browser.js', import.meta.url));
const killFile = fileURLToPath(new URL('./kill-shared.js', import.meta.url));
const deliveriesFile = fileURLToPath(new URL('./kill-deliveries.js', import.meta.url));
const alertsFile = fileURLToPath(new URL('./alerts-browser.js', import.meta.url));
const faultsFile = fileURLToPath(new URL('./faults.js', import.meta.url));
const unstorableFile = fileURLToPath(new URL('./unstorable.js', import.meta.url));
const chromium = process.env.QRVEND_CHROMIUM ?? '/usr/bin/chromium';
const mosquitto = process.env.QRVEND_MOSQUITTO_BIN ?? MOSQUITTO_BIN_DEFAULT;

function say(line: string): void {
  process.stderr.write(`npm run console-test: ${line}\n`);
}

function runOn(label: string, env: NodeJS.ProcessEnv, files = [file]): number {
  say(`node --test ${files.join(' ')} on ${label}`);
  const args = ['--test', '--test-reporter=spec', '--test-force-exit', '--test-timeout=600000', '--test-concurrency=1'];
  const r = spawnSync(process.execPath, [...args, ...files], { stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status ?? 1;
}

const missing = [
  existsSync(chromium) ? null : `chromium (${chromium}; apt-get install chromium)`,
  existsSync(mosquitto) ? null : `mosquitto (${mosquitto}; apt-get install mosquitto)`,
].filter((m): m is string => m !== null);
if (missing.length > 0) {
  say(`skipped: missing ${missing.join(' and ')}`);
  process.exit(0);
}
let failed =
  runOn('SQLite', { QRVEND_CONSOLE_TEST_PG: '' }, [file, routeFile, unstorableFile, alertsFile, faultsFile]) !== 0;
if (postgresBinDir() === null) {
  say('PostgreSQL run skipped: no /usr/lib/postgresql/*/bin/pg_ctl (apt-get install postgresql)');
} else {
  const pg = await startPostgres();
  try {
    const env = { QRVEND_CONSOLE_TEST_PG: pg.server, QRVEND_CONSOLE_SCREENSHOTS: '' };
    const files = [file, routeFile, unstorableFile, killFile, deliveriesFile, faultsFile];
    failed = runOn(`PostgreSQL (${pg.server})`, env, files) !== 0 || failed;
  } finally {
    pg.stop();
  }
}
process.exit(failed ? 1 : 0);
