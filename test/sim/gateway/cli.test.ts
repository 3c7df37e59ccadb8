/** `qrvend sim gateway` as a process: listens, serves, reports faults given by flag, stops on SIGTERM. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { builders as b, newTx, post } from './helpers.js';
import { RawJson } from '../../../src/gateway/wire/index.js';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MAIN = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

describe('qrvend sim gateway (CLI)', () => {
  it(
    'serves on the given address with flag faults and stops cleanly on SIGTERM',
    { timeout: TEST_DEADLINE_MS },
    async () => {
      const child = spawn(
        process.execPath,
        [MAIN, 'sim', 'gateway', '--listen', '127.0.0.1:0', '--fault', 'http500:1:Void', '--seed', '3'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      try {
        const lines = createInterface({ input: child.stdout! });
        let url = '';
        for await (const line of lines) {
          const entry = JSON.parse(line) as { url?: string };
          if (entry.url) {
            url = entry.url;
            break;
          }
        }
        assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
        const auth = await post(url, 'Authorization', b.authorization({ txId: newTx('cli'), amount: 5 }));
        assert.equal(auth.json.Status.Verdict, 'Approved');
        assert.equal(
          (
            await post(
              url,
              'Void',
              b.void({
                txId: newTx('cli'),
                amount: 1,
                paymentInfo: new RawJson('{}'),
                reasonCode: 3,
                machineAuTime: '050326140709',
                ageLimit: null,
              }),
            )
          ).status,
          500,
        );
        child.kill('SIGTERM');
        const [code] = await once(child, 'exit');
        assert.equal(code, 0);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
  );

  it('refuses a bad fault flag or address with a usage error (exit 64)', { timeout: TEST_DEADLINE_MS }, () => {
    const bad = spawnSync(process.execPath, [MAIN, 'sim', 'gateway', '--fault', 'explode:1'], {
      encoding: 'utf8',
      timeout: CHILD_DEADLINE_MS,
    });
    assert.equal(bad.status, 64, bad.stderr);
    assert.match(bad.stderr, /explode/);
    const badListen = spawnSync(process.execPath, [MAIN, 'sim', 'gateway', '--listen', 'nowhere'], {
      encoding: 'utf8',
      timeout: CHILD_DEADLINE_MS,
    });
    assert.equal(badListen.status, 64, badListen.stderr);
  });
});
