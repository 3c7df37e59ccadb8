/**
 * packaging/qrvend-release.sh, the root side of remote updates (docs/decisions/remote-updates-rollout.md items 4-5,
 * docs/releases.md), run as systemd runs it around every start of the agent, with systemd's
 * variables, on a temporary root (DPKG_ROOT): a running release 0.1.0 whose `qrvend update verify`
 * is a stand-in here (it checks the artifact's sha256 against the manifest and records how it was
 * called; the real command is the agent's, tested with it), a real release tarball of 0.2.0 made
 * with tar, and the files the agent leaves in its updates directory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { runScript } from './helpers.js';
import { ENDED, SCRIPT, activated, machine, requested, tarball, type Machine } from './release-machine.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test('nothing asked, nothing on trial: start and stop write nothing', T, async () => {
  const m = machine();
  try {
    assert.equal((await m.start()).code, 0);
    assert.equal((await m.stop(ENDED.killed)).code, 0);
    assert.equal(m.current(), 'releases/0.1.0');
    assert.equal(existsSync(m.state), false, 'not even its state directory (SD-card wear)');
    assert.equal(existsSync(join(m.opt, 'previous')), false);
  } finally {
    m.done();
  }
});

test('a rollback happens even when the report cannot be written (the updates directory is gone)', T, async () => {
  const m = machine();
  try {
    await activated(m);
    rmSync(m.upd, { recursive: true, force: true });
    const run = await m.stop(ENDED.killed);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(m.current(), 'releases/0.1.0');
    assert.match(run.stderr, /could not write .*rolled-back\.json/);
    assert.equal(existsSync(join(m.state, 'trial.json')), false);
  } finally {
    m.done();
  }
});

test(
  "activation: verified by the running release on root's copies, only the release " +
    'tree extracted, current switched, the trial counted; healthy confirms it',
  T,
  async () => {
    const m = machine();
    try {
      await activated(m);
      assert.equal(readlinkSync(join(m.opt, 'previous')), 'releases/0.1.0');
      assert.equal(readFileSync(join(m.opt, 'releases/0.2.0/bin/qrvend'), 'utf8'), '#!/bin/sh\necho 0.2.0\n');
      assert.equal(
        existsSync(join(m.opt, 'bin/qrvend-release')),
        false,
        'nothing outside releases/<version> is taken from the tarball',
      );
      assert.deepEqual(m.json(join(m.state, 'trial.json')), { version: '0.2.0', previous: '0.1.0', runs: 1 });
      // The agent (user qrvend) runs the release and reads the trial state, whatever the unit's umask.
      assert.equal(statSync(join(m.opt, 'releases/0.2.0/bin/qrvend')).mode & 0o777, 0o755);
      assert.equal(statSync(join(m.opt, 'releases/0.2.0')).mode & 0o777, 0o755);
      assert.equal(statSync(join(m.state, 'trial.json')).mode & 0o044, 0o044);
      assert.equal(statSync(m.state).mode & 0o777, 0o755);
      assert.equal(existsSync(join(m.upd, 'activate.json')), false, 'the request is consumed');
      const call = readFileSync(join(m.opt, 'releases/0.1.0/verify-calls'), 'utf8').trim();
      assert.equal(
        call,
        `update verify --manifest ${m.state}/incoming.manifest.json --artifact ${m.state}` +
          `/incoming.tar.gz --trust ${m.root}/etc/qrvend/fleet-trust.json --installed 0.1.0`,
      );
      assert.equal(existsSync(join(m.state, 'incoming.tar.gz')), false, 'the copy is removed once extracted');

      // The agent on trial said it is healthy: the next stop (or start, or the deadline) ends the trial.
      writeFileSync(join(m.upd, 'healthy.json'), '{"version":"0.2.0"}');
      assert.equal((await m.stop(ENDED.killed)).code, 0);
      assert.equal(existsSync(join(m.state, 'trial.json')), false);
      assert.equal(m.current(), 'releases/0.2.0');
      assert.equal(readlinkSync(join(m.opt, 'previous')), 'releases/0.1.0', 'the previous release stays');
      assert.equal(existsSync(join(m.upd, 'rolled-back.json')), false);
    } finally {
      m.done();
    }
  },
);

for (const [how, ended] of [
  ['is killed (a crash)', ENDED.killed],
  ['exits at start', ENDED.exitAtStart],
] as const) {
  test(
    `a trial start that ${how} before it is healthy brings the previous release back, with rolled-back.json`,
    T,
    async () => {
      const m = machine();
      try {
        await activated(m);
        const run = await m.stop(ended);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(m.current(), 'releases/0.1.0');
        assert.equal(existsSync(join(m.opt, 'previous')), false);
        assert.equal(existsSync(join(m.opt, 'releases/0.2.0')), false, 'the failed release is not kept');
        assert.equal(existsSync(join(m.state, 'trial.json')), false);
        const report = m.json('rolled-back.json');
        assert.equal(report.version, '0.2.0');
        assert.equal(report.previous, '0.1.0');
        assert.match(
          String(report.reason),
          new RegExp(
            `ended before it was confirmed healthy \\(${ended.SERVICE_RESULT}, ` +
              `${ended.EXIT_CODE} ${ended.EXIT_STATUS}\\)`,
          ),
        );
        // The previous release's start that follows: nothing more to do.
        assert.equal((await m.start()).code, 0);
        assert.equal(m.current(), 'releases/0.1.0');
      } finally {
        m.done();
      }
    },
  );
}

test(
  'power cuts: a trial start not seen ending is counted, not failed; three cut ' +
    'short in a row: the fourth start rolls back; a stop on request counts like one',
  T,
  async () => {
    const m = machine();
    try {
      await activated(m);
      assert.equal((await m.start()).code, 0); // the board lost power during the first trial start
      assert.equal(m.json(join(m.state, 'trial.json')).runs, 2);
      assert.equal((await m.stop(ENDED.stoppedOnRequest)).code, 0);
      assert.equal(m.current(), 'releases/0.2.0', 'stopped on request: no verdict');
      assert.equal((await m.start()).code, 0);
      assert.equal(m.json(join(m.state, 'trial.json')).runs, 3);
      assert.equal(m.current(), 'releases/0.2.0');
      const run = await m.start();
      assert.equal(run.code, 0, run.stderr);
      assert.equal(m.current(), 'releases/0.1.0');
      assert.match(String(m.json('rolled-back.json').reason), /cut short 3 times in a row/);
    } finally {
      m.done();
    }
  },
);

test('the deadline: not healthy in time rolls back; healthy in time confirms', T, async () => {
  const m = machine();
  try {
    await activated(m);
    assert.equal((await m.deadline('0.3.0')).code, 0);
    assert.equal(m.current(), 'releases/0.2.0', 'a deadline for another trial does nothing');
    const run = await m.deadline('0.2.0');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(m.current(), 'releases/0.1.0');
    assert.match(String(m.json('rolled-back.json').reason), /not healthy within the trial's deadline/);
  } finally {
    m.done();
  }
  const h = machine();
  try {
    await activated(h);
    writeFileSync(join(h.upd, 'healthy.json'), '{"version":"0.2.0"}');
    assert.equal((await h.deadline('0.2.0')).code, 0);
    assert.equal(h.current(), 'releases/0.2.0');
    assert.equal(existsSync(join(h.state, 'trial.json')), false);
  } finally {
    h.done();
  }
});

test('healthy before a power cut: the next start confirms the trial instead of counting it', T, async () => {
  const m = machine();
  try {
    await activated(m);
    writeFileSync(join(m.upd, 'healthy.json'), '{"version":"0.2.0"}');
    for (let i = 0; i < 4; i += 1) assert.equal((await m.start()).code, 0);
    assert.equal(m.current(), 'releases/0.2.0');
    assert.equal(existsSync(join(m.state, 'trial.json')), false);
    assert.equal(existsSync(join(m.upd, 'rolled-back.json')), false);
  } finally {
    m.done();
  }
});

test('a healthy.json for another version does not confirm the trial', T, async () => {
  const m = machine();
  try {
    await activated(m);
    writeFileSync(join(m.upd, 'healthy.json'), '{"version":"0.1.0"}');
    await m.stop(ENDED.killed);
    assert.equal(m.current(), 'releases/0.1.0');
  } finally {
    m.done();
  }
});

test(
  'cut short mid-way: between the trial mark and the switch it ' +
    'activates again; after the rollback report it finishes the rollback',
  T,
  async () => {
    const m = machine();
    try {
      requested(m, '0.2.0', tarball(m, '0.2.0'));
      mkdirSync(m.state, { recursive: true });
      writeFileSync(join(m.state, 'trial.json'), '{"version":"0.2.0","previous":"0.1.0","runs":1}\n');
      mkdirSync(join(m.opt, 'releases/.incoming-0.2.0/opt'), { recursive: true }); // a half extraction
      const run = await m.start();
      assert.equal(run.code, 0, run.stderr);
      assert.equal(m.current(), 'releases/0.2.0');
      assert.equal(existsSync(join(m.opt, 'releases/.incoming-0.2.0')), false);
      assert.deepEqual(m.json(join(m.state, 'trial.json')), { version: '0.2.0', previous: '0.1.0', runs: 1 });

      writeFileSync(
        join(m.upd, 'rolled-back.json'),
        '{"version":"0.2.0","previous":"0.1.0","at":"2026-11-26T05:00:00Z","reason":"first reason"}\n',
      );
      assert.equal((await m.start()).code, 0);
      assert.equal(m.current(), 'releases/0.1.0');
      assert.equal(m.json('rolled-back.json').reason, 'first reason', 'the report written before the cut stays');
    } finally {
      m.done();
    }
  },
);

test(
  'refused activations leave activation-refused.json and change nothing: ' +
    "tampered artifact, another version's artifact, a hostile request, a symlink",
  T,
  async () => {
    const cases: Array<[string, (m: Machine) => void, RegExp, string]> = [
      [
        'tampered',
        (m) => {
          requested(m, '0.2.0', tarball(m, '0.2.0'));
          writeFileSync(
            join(m.upd, 'downloads/0.2.0/artifact.tar.gz'),
            Buffer.concat([readFileSync(join(m.upd, 'downloads/0.2.0/artifact.tar.gz')), Buffer.from('x')]),
          );
        },
        /qrvend update verify refused/,
        '0.2.0',
      ],
      [
        'another version',
        (m) => requested(m, '0.2.0', tarball(m, '0.2.0'), '0.3.0'),
        /does not carry release 0\.3\.0/,
        '0.3.0',
      ],
      [
        'a path for a version',
        (m) => {
          writeFileSync(join(m.upd, 'activate.json'), '{"version":"../../../etc"}');
        },
        /names no valid version/,
        '',
      ],
      [
        'two versions',
        (m) => {
          writeFileSync(join(m.upd, 'activate.json'), '{"version":"0.2.0","version":"0.3.0"}');
        },
        /not a request this script can read/,
        '',
      ],
      [
        'a symlink',
        (m) => {
          requested(m, '0.2.0', tarball(m, '0.2.0'));
          rmSync(join(m.upd, 'downloads/0.2.0/artifact.tar.gz'));
          symlinkSync(join(m.root, 'etc/qrvend/fleet-trust.json'), join(m.upd, 'downloads/0.2.0/artifact.tar.gz'));
        },
        /artifact\.tar\.gz is missing or not a plain file/,
        '0.2.0',
      ],
    ];
    for (const [name, arrange, reason, version] of cases) {
      const m = machine();
      try {
        arrange(m);
        const run = await m.start();
        assert.equal(run.code, 0, `${name}: ${run.stderr}`);
        assert.equal(m.current(), 'releases/0.1.0', name);
        const refused = m.json('activation-refused.json');
        assert.match(String(refused.reason), reason, name);
        assert.equal(refused.version, version, name);
        assert.equal(existsSync(join(m.upd, 'activate.json')), false, `${name}: the request is consumed`);
        assert.equal(existsSync(join(m.state, 'trial.json')), false, name);
        assert.deepEqual(
          existsSync(join(m.opt, 'releases/0.2.0')) || existsSync(join(m.opt, 'releases/0.3.0')),
          false,
          name,
        );
      } finally {
        m.done();
      }
    }
  },
);

test('a hostile argument is refused with the usage line', T, async () => {
  for (const args of [
    ['start', 'relative/dir'],
    ['start', '/tmp', '5'],
    ['start', '/tmp', '60; reboot'],
    ['frobnicate'],
    ['installed', '../x'],
  ]) {
    const run = await runScript(SCRIPT, args, { env: { DPKG_ROOT: '/nonexistent-root' } });
    assert.equal(run.code, 64, args.join(' '));
    assert.match(run.stderr, /^usage: qrvend-release/);
  }
});

test(
  "an activation keeps the unit's start alive while it runs " +
    '(EXTEND_TIMEOUT_USEC through systemd-notify), and only then',
  T,
  async () => {
    const m = machine();
    try {
      // systemd's side, played by a systemd-notify on PATH that records what it was asked to send.
      const bin = join(m.root, 'fake-bin');
      mkdirSync(bin);
      const sent = join(m.root, 'notify-sent');
      writeFileSync(join(bin, 'systemd-notify'), `#!/bin/sh\nprintf '%s\\n' "$*" >>${JSON.stringify(sent)}\n`);
      chmodSync(join(bin, 'systemd-notify'), 0o755);
      const env = { DPKG_ROOT: m.root, NOTIFY_SOCKET: '/run/systemd/notify', PATH: `${bin}:${process.env.PATH ?? ''}` };
      const start = () => runScript(SCRIPT, ['start', m.upd, '60'], { env });

      assert.equal((await start()).code, 0);
      assert.equal(existsSync(sent), false, 'nothing to activate: no notification');

      requested(m, '0.2.0', tarball(m, '0.2.0'));
      const run = await start();
      assert.equal(run.code, 0, run.stderr);
      assert.equal(m.current(), 'releases/0.2.0');
      const lines = readFileSync(sent, 'utf8').trim().split('\n');
      assert.ok(lines.length >= 1);
      for (const line of lines) assert.equal(line, 'EXTEND_TIMEOUT_USEC=30000000');
    } finally {
      m.done();
    }
  },
);
