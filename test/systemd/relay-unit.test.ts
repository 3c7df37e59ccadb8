/**
 * The relay's unit file: `systemd-analyze verify` accepts it without a warning, its hardening score
 * stays where docs/relay.md says (1.3 measured; 1.5 or better required), and it starts what the
 * docs say with the configuration checked first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHILD_DEADLINE_MS, TEST_DEADLINE_MS } from '../support/deadlines.js';

const UNIT = fileURLToPath(new URL('../../../systemd/qrvend-relay.service', import.meta.url));
const text = readFileSync(UNIT, 'utf8');
const T = { timeout: TEST_DEADLINE_MS };

function hasSystemdAnalyze(): boolean {
  try {
    execFileSync('systemd-analyze', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test(
  'the relay unit starts qrvend relay on /etc/qrvend/relay.json, checked first, and never restarts on a bad config',
  T,
  () => {
    assert.match(text, /^ExecStart=\/opt\/qrvend\/bin\/qrvend relay --config \/etc\/qrvend\/relay\.json$/m);
    assert.match(text, /^ExecStartPre=\/opt\/qrvend\/bin\/qrvend relay --config \/etc\/qrvend\/relay\.json --check$/m);
    assert.match(text, /^RestartPreventExitStatus=78$/m);
    assert.match(text, /^User=qrvend$/m);
    assert.match(text, /^NoNewPrivileges=yes$/m);
    // relay.stateDir's default: the newest registry verified is kept there across restarts.
    assert.match(text, /^StateDirectory=qrvend-relay$/m);
  },
);

test('systemd-analyze verify passes with no warnings', T, (t) => {
  if (!hasSystemdAnalyze()) {
    t.skip('systemd-analyze is not installed (apt-get install systemd)');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-relay-unit-'));
  try {
    const standIn = join(dir, 'qrvend');
    writeFileSync(standIn, '#!/bin/sh\n');
    chmodSync(standIn, 0o755);
    const copy = join(dir, 'qrvend-relay.service');
    writeFileSync(copy, text.replaceAll('=/opt/qrvend/bin/qrvend ', `=${standIn} `));
    const run = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8', timeout: CHILD_DEADLINE_MS });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stderr.trim(), '', `systemd-analyze verify complained:\n${run.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('systemd-analyze security scores the relay unit at 1.5 or better', T, (t) => {
  if (!hasSystemdAnalyze()) {
    t.skip('systemd-analyze is not installed');
    return;
  }
  const run = spawnSync('systemd-analyze', ['security', '--offline=yes', UNIT], {
    encoding: 'utf8',
    timeout: CHILD_DEADLINE_MS,
  });
  const m = /Overall exposure level for qrvend-relay\.service: (\d+\.\d)/.exec(`${run.stdout}${run.stderr}`);
  assert.ok(m, `no score in: ${run.stdout}${run.stderr}`);
  assert.ok(Number(m[1]) <= 1.5, `exposure ${m[1]} is above 1.5`);
});

test('the example relay configuration is valid', T, async () => {
  const { validateRelayConfig } = await import('../../src/relay/index.js');
  const example = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../../config/relay.example.json', import.meta.url)), 'utf8'),
  );
  const config = validateRelayConfig(example, 'config/relay.example.json');
  assert.equal(config.timeoutMs, 5000);
});
