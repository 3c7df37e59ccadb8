/**
 * A machine for packaging/qrvend-release.sh on a temporary root (DPKG_ROOT), as systemd runs the
 * script around the agent's starts: a running release 0.1.0 whose `qrvend update verify` is a
 * stand-in (it checks the artifact's sha256 against the manifest and records how it was called),
 * real release tarballs made with tar, and the files the agent leaves in its updates directory.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO, runScript } from './helpers.js';

export const SCRIPT = join(REPO, 'packaging/qrvend-release.sh');

export const ENDED = {
  killed: { SERVICE_RESULT: 'signal', EXIT_CODE: 'killed', EXIT_STATUS: 'KILL' },
  exitAtStart: { SERVICE_RESULT: 'exit-code', EXIT_CODE: 'exited', EXIT_STATUS: '1' },
  stoppedOnRequest: { SERVICE_RESULT: 'success', EXIT_CODE: 'exited', EXIT_STATUS: '0' },
};

/** The running release's `qrvend`: `update verify` compares the artifact's sha256 with the manifest's. */
const VERIFY_STAND_IN = `#!/bin/sh
printf '%s\\n' "$*" >>"$(dirname "$0")/../verify-calls"
[ "$1 $2" = "update verify" ] || exit 2
want=$(sed -n 's/.*"sha256":"\\([0-9a-f]*\\)".*/\\1/p' "$4")
got=$(sha256sum "$6" | cut -d' ' -f1)
[ -n "$want" ] && [ "$want" = "$got" ] || { echo "artifact sha256 $got does not match the manifest" >&2; exit 1; }
`;

export interface Machine {
  root: string;
  opt: string;
  upd: string;
  state: string;
  /** `extra`: more of the environment (a PATH with a fault injected). */
  start(extra?: NodeJS.ProcessEnv): ReturnType<typeof runScript>;
  stop(ended: Record<string, string>): ReturnType<typeof runScript>;
  deadline(version: string): ReturnType<typeof runScript>;
  current(): string;
  json(name: string): Record<string, unknown>;
  done(): void;
}

export function machine(): Machine {
  const root = mkdtempSync(join(tmpdir(), 'qrvend-release-'));
  const opt = join(root, 'opt/qrvend');
  const upd = join(root, 'var/lib/qrvend/updates');
  mkdirSync(join(opt, 'releases/0.1.0/bin'), { recursive: true });
  writeFileSync(join(opt, 'releases/0.1.0/bin/qrvend'), VERIFY_STAND_IN);
  chmodSync(join(opt, 'releases/0.1.0/bin/qrvend'), 0o755);
  symlinkSync('releases/0.1.0', join(opt, 'current'));
  mkdirSync(join(root, 'etc/qrvend'), { recursive: true });
  writeFileSync(join(root, 'etc/qrvend/fleet-trust.json'), '{"keys":[]}');
  mkdirSync(upd, { recursive: true });
  const env = { DPKG_ROOT: root };
  return {
    root,
    opt,
    upd,
    state: join(root, 'var/lib/qrvend-release'),
    // Under the unit's UMask=0077, as systemd runs it.
    start: (extra = {}) =>
      runScript('/bin/sh', ['-c', 'umask 077 && exec "$0" "$@"', SCRIPT, 'start', upd, '60'], {
        env: { ...env, ...extra },
      }),
    stop: (ended) => runScript(SCRIPT, ['stop', upd], { env: { ...env, ...ended } }),
    deadline: (version) => runScript(SCRIPT, ['deadline', upd, version], { env }),
    current: () => readlinkSync(join(opt, 'current')),
    json: (name) =>
      JSON.parse(readFileSync(name.startsWith('/') ? name : join(upd, name), 'utf8')) as Record<string, unknown>,
    done: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A release tarball as `npm run release` lays it out, of `version`. */
export function tarball(m: Machine, version: string): Buffer {
  const stage = join(m.root, `.stage-${version}`);
  const rel = join(stage, 'opt/qrvend/releases', version);
  mkdirSync(join(rel, 'bin'), { recursive: true });
  mkdirSync(join(stage, 'opt/qrvend/bin'), { recursive: true });
  mkdirSync(join(stage, 'usr/bin'), { recursive: true });
  writeFileSync(join(rel, 'bin/qrvend'), `#!/bin/sh\necho ${version}\n`);
  chmodSync(join(rel, 'bin/qrvend'), 0o755);
  writeFileSync(join(rel, 'package.json'), JSON.stringify({ version }));
  writeFileSync(join(stage, 'opt/qrvend/bin/qrvend-release'), '#!/bin/sh\necho a tarball never replaces this\n');
  symlinkSync(`releases/${version}`, join(stage, 'opt/qrvend/current'));
  const file = join(m.root, `.tarball-${version}.tar.gz`);
  execFileSync('tar', ['-czf', file, '-C', stage, 'opt', 'usr']);
  rmSync(stage, { recursive: true, force: true });
  return readFileSync(file);
}

/** What the agent leaves once the download is verified and the machine idle: downloads/<dir>/, activate.json. */
export function requested(m: Machine, version: string, artifact: Buffer, dir = version): void {
  const dl = join(m.upd, 'downloads', dir);
  mkdirSync(dl, { recursive: true });
  writeFileSync(join(dl, 'artifact.tar.gz'), artifact);
  const sha256 = createHash('sha256').update(artifact).digest('hex');
  writeFileSync(join(dl, 'manifest.json'), JSON.stringify({ version, sha256 }));
  const request = { version: dir, rolloutId: 'r-1', requestedAt: '2026-11-26T05:00:00Z' };
  writeFileSync(join(m.upd, 'activate.json'), JSON.stringify(request, null, 2));
}

export async function activated(m: Machine): Promise<void> {
  requested(m, '0.2.0', tarball(m, '0.2.0'));
  const run = await m.start();
  assert.equal(run.code, 0, run.stderr);
  assert.equal(m.current(), 'releases/0.2.0', run.stderr);
}
