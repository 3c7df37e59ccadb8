/**
 * `npm run fleet-test`: every fleet and relay test file (test/fleet/**, the device side's end-to-end
 * cases in test/fleet/e2e/ included, and test/relay/**, the Start relay's) against Debian's mosquitto instead of the
 * in-process aedes broker
 * (QRVEND_TEST_BROKER=mosquitto): MQTT 5, the ACL file, a broker that is a separate process.
 * Each test starts its own mosquitto on a free loopback port with a temporary configuration.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MOSQUITTO_BIN_DEFAULT } from '../../rigs/broker/mosquitto-broker.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const bin = process.env.QRVEND_MOSQUITTO_BIN ?? MOSQUITTO_BIN_DEFAULT;
if (!existsSync(bin)) {
  process.stderr.write(
    `npm run fleet-test: mosquitto not found at ${bin}. Install the Debian package: apt-get install ` +
      `mosquitto (the service need not run: each test starts its own broker), or set QRVEND_MOSQUITTO_BIN.\n`,
  );
  process.exit(1);
}

function testFiles(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? testFiles(path) : name.endsWith('.test.js') ? [path] : [];
    })
    .sort();
}

const files = [...testFiles(here), ...testFiles(join(here, '../relay'))];
process.stderr.write(`npm run fleet-test: ${files.length} test files against ${bin}\n`);
const child = spawn(
  process.execPath,
  ['--test', '--test-reporter=spec', '--test-force-exit', '--test-timeout=600000', '--test-concurrency=1', ...files],
  {
    stdio: 'inherit',
    env: { ...process.env, QRVEND_TEST_BROKER: 'mosquitto' },
  },
);
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
