/**
 * Release versions in order (semver 2.0.0 precedence, section 11): MAJOR.MINOR.PATCH compared as
 * numbers, then a version with a pre-release is older than the same version without one, and
 * pre-releases are compared identifier by identifier (numeric ones as numbers and older than any
 * alphanumeric one; then ASCII order; a shorter list that is a prefix is older). So 1.2.0-rc.2 <
 * 1.2.0-rc.10 < 1.2.0 < 1.10.0, where a string comparison would get two of those wrong.
 */
import { RELEASE_VERSION } from '../fleet/contract/release-version.js';

interface Parsed {
  core: [number, number, number];
  pre: string[];
}

function parse(version: string): Parsed | null {
  const m = RELEASE_VERSION.exec(version);
  if (m === null) return null;
  const pre = m[4] === undefined ? [] : m[4].slice(1).split('.');
  if (pre.some((id) => id.length === 0)) return null;
  return { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre };
}

export function isReleaseVersion(version: string): boolean {
  return parse(version) !== null;
}

const NUMERIC = /^\d+$/;

function compareIdentifiers(a: string, b: string): number {
  const an = NUMERIC.test(a);
  const bn = NUMERIC.test(b);
  if (an && bn) return Math.sign(Number(a) - Number(b));
  if (an !== bn) return an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** -1, 0 or 1 as `a` is older than, the same as or newer than `b`; throws RangeError for a version that is not one. */
export function compareVersions(a: string, b: string): number {
  const pa = parse(a);
  const pb = parse(b);
  if (pa === null) throw new RangeError(`${JSON.stringify(a.slice(0, 64))} is not a release version`);
  if (pb === null) throw new RangeError(`${JSON.stringify(b.slice(0, 64))} is not a release version`);
  for (let i = 0; i < 3; i += 1) {
    if (pa.core[i] !== pb.core[i]) return Math.sign(pa.core[i]! - pb.core[i]!);
  }
  if (pa.pre.length === 0 || pb.pre.length === 0)
    return pa.pre.length === pb.pre.length ? 0 : pa.pre.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.min(pa.pre.length, pb.pre.length); i += 1) {
    const c = compareIdentifiers(pa.pre[i]!, pb.pre[i]!);
    if (c !== 0) return c;
  }
  return Math.sign(pa.pre.length - pb.pre.length);
}
