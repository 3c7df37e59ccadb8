/**
 * scripts/qrvend-test-vend: it runs `qrvend demo` with the options given after `--` and turns the
 * demo's exit into PASS/FAIL. A stand-in qrvend (QRVEND_BIN) records how it was called; when the
 * real demo is built, it is run too.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO, runScript } from './helpers.js';
import { tempDir } from '../doctor/helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const TEST_VEND = join(REPO, 'scripts/qrvend-test-vend');

function standIn(dir: string, demoExit: number): string {
  const file = join(dir, 'qrvend');
  writeFileSync(
    file,
    `#!/bin/sh\nif [ "$2" = --help ]; then exit 0; fi\nprintf '%s\\n' "$*" >> '${dir}/calls'\nexit ${demoExit}\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

test(
  'passes demo options through and reports PASS on exit 0, FAIL otherwise',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const tmp = tempDir('qrvend-test-vend-');
    try {
      const ok = await runScript(TEST_VEND, ['--timeout', '20', '--', '--flow', 'static'], {
        env: { QRVEND_BIN: standIn(tmp.dir, 0) },
      });
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stderr, /PASS/);
      assert.equal(readFileSync(join(tmp.dir, 'calls'), 'utf8'), 'demo --flow static\n');

      const bad = await runScript(TEST_VEND, [], { env: { QRVEND_BIN: standIn(tmp.dir, 3) } });
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /FAIL: the demo exited with 3/);

      const usage = await runScript(TEST_VEND, ['--timeout', 'soon'], { env: { QRVEND_BIN: standIn(tmp.dir, 0) } });
      assert.equal(usage.code, 64);
    } finally {
      tmp.cleanup();
    }
  },
);

test('runs the real demo when it is built', { timeout: TEST_DEADLINE_MS }, async (t) => {
  const cli = join(REPO, 'dist/src/cli/main.js');
  const help = spawnSync(process.execPath, [cli, 'demo', '--help'], { encoding: 'utf8' });
  if (help.status !== 0 || /not built yet/.test(help.stdout + help.stderr)) {
    t.skip('qrvend demo is not built yet');
    return;
  }
  const tmp = tempDir('qrvend-test-vend-real-');
  try {
    const wrapper = join(tmp.dir, 'qrvend');
    writeFileSync(wrapper, `#!/bin/sh\nexec '${process.execPath}' '${cli}' "$@"\n`);
    chmodSync(wrapper, 0o755);
    const run = await runScript(TEST_VEND, ['--timeout', '150'], { env: { QRVEND_BIN: wrapper }, timeoutMs: 170_000 });
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stderr, /PASS/);
  } finally {
    tmp.cleanup();
  }
});
