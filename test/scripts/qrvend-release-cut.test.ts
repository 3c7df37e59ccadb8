/**
 * packaging/qrvend-release.sh cut short by a power cut at the one point where the release is
 * switched but its request not yet consumed (docs/releases.md, "What happens on each failure").
 * The script runs for real on a temporary root (release-machine.ts); the cut is a `rm` earlier on
 * its PATH that kills the script (SIGKILL: nothing after it runs) when it is asked to remove
 * activate.json while `current` already leads to the new release.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { machine, requested, tarball, type Machine } from './release-machine.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const REAL_RM = execFileSync('/bin/sh', ['-c', 'command -v rm'], { encoding: 'utf8' }).trim();

/** The environment of a start whose power is cut right after `current` switched to `version`. */
function cutAfterSwitch(m: Machine, version: string): NodeJS.ProcessEnv {
  const bin = join(m.root, 'cut-bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    join(bin, 'rm'),
    [
      '#!/bin/sh',
      'for a in "$@"; do',
      '  case $a in */activate.json)',
      `    link=$(readlink ${JSON.stringify(join(m.opt, 'current'))})`,
      `    if [ "$link" = ${JSON.stringify(`releases/${version}`)} ]; then`,
      '      kill -KILL "$PPID"; exit 137',
      '    fi ;;',
      '  esac',
      'done',
      `exec ${JSON.stringify(REAL_RM)} "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(join(bin, 'rm'), 0o755);
  return { PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` };
}

/** Activates 0.2.0 with the power cut after the switch; proves the cut came at that point. */
async function activatedThenCut(m: Machine): Promise<void> {
  requested(m, '0.2.0', tarball(m, '0.2.0'));
  const cut = await m.start(cutAfterSwitch(m, '0.2.0'));
  assert.notEqual(cut.code, 0, 'the start was killed');
  assert.equal(m.current(), 'releases/0.2.0', 'switched before the cut');
  assert.equal(existsSync(join(m.upd, 'activate.json')), true, 'the request is still there');
  assert.deepEqual(m.json(join(m.state, 'trial.json')), { version: '0.2.0', previous: '0.1.0', runs: 1 });
}

test(
  'a power cut after the switch, before the request is consumed: the next start is the trial again, ' +
    'the leftover request consumed silently; the fourth start rolls back',
  T,
  async () => {
    const m = machine();
    try {
      await activatedThenCut(m);
      const next = await m.start();
      assert.equal(next.code, 0, next.stderr);
      const refused = join(m.upd, 'activation-refused.json');
      assert.equal(existsSync(refused), false, `nothing refused: ${next.stderr}`);
      assert.equal(existsSync(join(m.upd, 'activate.json')), false, 'the request that started this trial is consumed');
      assert.equal(m.current(), 'releases/0.2.0');
      assert.equal(m.json(join(m.state, 'trial.json')).runs, 2, 'the cut start counts as a trial start cut short');

      // Two more trial starts cut short: the fourth start brings the previous release back.
      assert.equal((await m.start()).code, 0);
      assert.equal(m.json(join(m.state, 'trial.json')).runs, 3);
      assert.equal(m.current(), 'releases/0.2.0', 'the third trial start runs the new release');
      const fourth = await m.start();
      assert.equal(fourth.code, 0, fourth.stderr);
      assert.equal(m.current(), 'releases/0.1.0', 'rolled back at the fourth start');
      assert.match(String(m.json('rolled-back.json').reason), /cut short 3 times in a row/);
      assert.equal(existsSync(join(m.upd, 'activation-refused.json')), false);
    } finally {
      m.done();
    }
  },
);

test(
  'the same cut after an earlier rollback of the same version: that old report does not roll the new trial back',
  T,
  async () => {
    const m = machine();
    try {
      // 0.2.0 was tried before and rolled back; the agent keeps the report until a release passes.
      const earlier = { version: '0.2.0', previous: '0.1.0', at: '2026-11-20T05:00:00Z', reason: 'an earlier trial' };
      writeFileSync(join(m.upd, 'rolled-back.json'), `${JSON.stringify(earlier)}\n`);
      await activatedThenCut(m);
      const next = await m.start();
      assert.equal(next.code, 0, next.stderr);
      assert.doesNotMatch(next.stderr, /rolled back/);
      assert.equal(m.current(), 'releases/0.2.0', `still on trial: ${next.stderr}`);
      assert.equal(m.json(join(m.state, 'trial.json')).runs, 2);
      const report = join(m.upd, 'rolled-back.json');
      assert.equal(existsSync(report), false, "the earlier trial's report went with its activation");
      assert.equal(existsSync(join(m.upd, 'activation-refused.json')), false);
    } finally {
      m.done();
    }
  },
);

test('a leftover request for another version than the one on trial is still refused, naming the trial', T, async () => {
  const m = machine();
  try {
    await activatedThenCut(m);
    const another = { version: '0.3.0', rolloutId: 'r-2', requestedAt: '2026-11-26T06:00:00Z' };
    writeFileSync(join(m.upd, 'activate.json'), JSON.stringify(another));
    const next = await m.start();
    assert.equal(next.code, 0, next.stderr);
    const { version, reason } = m.json('activation-refused.json');
    assert.deepEqual({ version, reason }, { version: '0.3.0', reason: 'release 0.2.0 is on trial' });
    assert.equal(existsSync(join(m.upd, 'activate.json')), false);
    assert.equal(m.current(), 'releases/0.2.0');
  } finally {
    m.done();
  }
});
