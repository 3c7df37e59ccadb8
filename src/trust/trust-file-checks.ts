/**
 * Who may have written the trust file (docs/security.md, "The trust file"). A key anybody can add
 * is no key, so the file is refused at start, naming why, when someone other than root or the user
 * the agent runs as could have chosen its content:
 * - it is a symbolic link (whoever may change the link chooses the file; name the file itself);
 * - it is writable by group or others;
 * - it is owned by another user than root or the agent's own user;
 * - its directory is writable by group or others, or owned by another user (the file can be
 *   replaced by a rename there, whatever the file's own mode).
 *
 * The agent's own user is allowed as an owner because a machine installed by the package has the
 * file owned by root, while a developer's or a test's agent runs unprivileged with its own files;
 * either way no third user is involved. doctor still warns when the owner is not root.
 */
import { lstatSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** root, and the user this process runs as. */
export function allowedOwners(): ReadonlySet<number> {
  const owners = new Set<number>([0]);
  if (typeof process.getuid === 'function') owners.add(process.getuid());
  return owners;
}

const ownerText = (owners: ReadonlySet<number>) =>
  [...owners].map((uid) => (uid === 0 ? 'root' : `uid ${uid}`)).join(' or ');

/** Why the file found at `path` (its lstat) may not be trusted, or null. */
export function trustFileProblem(
  path: string,
  file: Stats,
  owners: ReadonlySet<number> = allowedOwners(),
): string | null {
  if (file.isSymbolicLink()) {
    return (
      `${path} is a symbolic link: set fleet.trustFile to the file itself ` +
      '(a link lets whoever may change it choose the keys)'
    );
  }
  if (!file.isFile()) return `${path} is not a regular file`;
  if ((file.mode & 0o022) !== 0) return `${path} is writable by group or others: chmod 0644 (owner root) it`;
  if (!owners.has(file.uid)) {
    return `${path} is owned by uid ${file.uid}, not by ${ownerText(owners)}: chown root ${path}`;
  }
  const dir = dirname(resolve(path));
  let folder: Stats;
  try {
    folder = statSync(dir);
  } catch (err) {
    return `its directory ${dir} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  if ((folder.mode & 0o022) !== 0) {
    return (
      `${path} is inside ${dir}, which group or others may write (anyone there can replace the file): ` +
      'move it to a directory only root writes, e.g. /etc/qrvend'
    );
  }
  if (!owners.has(folder.uid)) {
    return `${path} is inside ${dir}, owned by uid ${folder.uid}, not by ${ownerText(owners)}: chown root ${dir}`;
  }
  return null;
}

/** lstat of `path` (the link itself, when it is one). */
export function trustFileStat(path: string): Stats {
  return lstatSync(path);
}
