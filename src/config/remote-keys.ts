/**
 * What the fleet may set (docs/decisions/fleet-link.md, "Trust"; docs/decisions/fleet-trust.md item 3): `config.set`
 * writes only
 * the keys listed here, and the daemon loads an overlay only if every key in it is listed. The rest
 * (every file or path, URL, host or listen address, credential, the machine's identity, currency
 * and decimals, the gateway, the store, the fleet link itself, logging, the Start endpoint, the
 * serial line and GPIO wiring) is the site file's alone: a broker credential, or a stolen operator
 * key, must not be able to send money, secrets or the ledger somewhere else.
 *
 * Money-bearing keys stay under a ceiling only the site file sets, and a catalog item's age limit
 * can be raised from afar, never lowered or removed. docs/fleet.md shows this table; a test keeps
 * the two equal.
 */
import type { ConfigProblem } from './problem.js';
import { DISPLAY_COLOR_NAMES } from './schema.js';

export interface RemoteKey {
  /** Dotted key path; `*` stands for one level of any name (a catalog item number, a language). */
  path: string;
  /** What bounds it beyond the schema, for the table in docs/fleet.md. */
  bound: string;
}

const SCHEMA = '-';

export const REMOTE_KEYS: readonly RemoteKey[] = [
  { path: 'mdb.sessionIdleTimeoutMs', bound: SCHEMA },
  { path: 'mdb.vendResultTimeoutMs', bound: SCHEMA },
  { path: 'mdb.linkWatchdogMs', bound: SCHEMA },
  { path: 'mdb.reopenMinMs', bound: SCHEMA },
  { path: 'mdb.reopenMaxMs', bound: SCHEMA },
  { path: 'mdb.maxLineLength', bound: SCHEMA },
  {
    path: 'staticQr.preauthAmount',
    bound: "at most `fleet.remoteLimits.maxPreauthAmount` (default: the site's own `staticQr.preauthAmount`)",
  },
  { path: 'staticQr.verifyAge', bound: SCHEMA },
  { path: 'dynamicQr.paymentTimeoutMs', bound: SCHEMA },
  { path: 'dynamicQr.pollIntervalMs', bound: SCHEMA },
  { path: 'catalog.*.name', bound: SCHEMA },
  { path: 'catalog.*.names.*', bound: SCHEMA },
  { path: 'catalog.*.measurement', bound: SCHEMA },
  { path: 'catalog.*.unitOfMeasurement', bound: SCHEMA },
  { path: 'catalog.*.ageLimit', bound: "raised only: never below, nor null over, the site's value for that item" },
  { path: 'display.terminal', bound: SCHEMA },
  { path: 'display.width', bound: SCHEMA },
  { path: 'display.height', bound: SCHEMA },
  { path: 'display.language', bound: SCHEMA },
  { path: 'display.locale', bound: SCHEMA },
  { path: 'display.rotate', bound: SCHEMA },
  { path: 'display.colors.*', bound: SCHEMA },
];

const PATTERNS = REMOTE_KEYS.map((k) => k.path.split('.'));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isPlainObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const levelMatches = (pattern: string, level: string) => pattern === '*' || pattern === level;

/** Names JavaScript gives a meaning on every object: never a configuration key, whatever a `*` says. */
const OBJECT_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
/** An MDB item number as the catalog writes it: no leading zero, so one item has one key. */
const ITEM_NUMBER = /^(0|[1-9][0-9]{0,4})$/;

/**
 * Why a level a `*` of the table would match is not a name the overlay may hold, or null. The
 * overlay holds each key in one spelling (docs/fleet.md, "config.set"): `012` and `12` would be
 * two keys of one catalog item, and `__proto__` is no key at all.
 */
function nameProblem(parent: string[], level: string): string | null {
  const where = parent.join('.');
  if (where === 'catalog') {
    if (ITEM_NUMBER.test(level)) return null;
    if (/^[0-9]{1,5}$/.test(level)) {
      return `an MDB item number is written without leading zeros: write it ${Number(level)}`;
    }
    return "not an MDB item number (the catalog's keys are item numbers such as 12)";
  }
  if (OBJECT_NAMES.has(level)) return 'not settable from the fleet: not a configuration key';
  if (where === 'display.colors' && !DISPLAY_COLOR_NAMES.includes(level as (typeof DISPLAY_COLOR_NAMES)[number])) {
    return `not settable from the fleet: display.colors has ${DISPLAY_COLOR_NAMES.join(', ')}`;
  }
  return null;
}

/** Whether `path` is a whole key of the table (a leaf), or a level on the way to one. */
function classify(path: string[]): 'key' | 'prefix' | 'no' {
  let prefix = false;
  for (const pattern of PATTERNS) {
    if (path.length > pattern.length || !path.every((level, i) => levelMatches(pattern[i]!, level))) continue;
    if (path.length === pattern.length) return 'key';
    prefix = true;
  }
  return prefix ? 'prefix' : 'no';
}

function at(value: unknown, path: string[]): unknown {
  let v = value;
  for (const level of path) {
    if (!isPlainObject(v) || !Object.prototype.hasOwnProperty.call(v, level)) return undefined;
    v = v[level];
  }
  return v;
}

/**
 * The ceiling of staticQr.preauthAmount from the base layers (defaults and site file), or null when they do not say.
 */
export function preauthCeiling(base: unknown): number | null {
  const limit = at(base, ['fleet', 'remoteLimits', 'maxPreauthAmount']);
  if (typeof limit === 'number') return limit;
  const own = at(base, ['staticQr', 'preauthAmount']);
  return typeof own === 'number' ? own : null;
}

function bounded(path: string[], value: unknown, base: unknown): string | null {
  const key = path.join('.');
  if (key === 'staticQr.preauthAmount' && typeof value === 'number') {
    const ceiling = preauthCeiling(base);
    if (ceiling !== null && value > ceiling)
      return (
        `at most ${ceiling} from the fleet (fleet.remoteLimits.maxPreauthAmount, ` +
        `or the site's own staticQr.preauthAmount, in the site file)`
      );
  }
  if (path[0] === 'catalog' && path[2] === 'ageLimit') {
    const siteLimit = at(base, path);
    if (typeof siteLimit === 'number' && (value === null || (typeof value === 'number' && value < siteLimit))) {
      return `the site file sets ${siteLimit}: the fleet may raise an age limit, never lower or remove it`;
    }
  }
  return null;
}

/**
 * Every key of `value` (a config.set's change as received, before anything is layered: layering
 * would give `__proto__` its JavaScript meaning) named in a spelling the overlay may not hold.
 */
export function keyNameProblems(value: unknown, path: string[] = []): ConfigProblem[] {
  if (!isPlainObject(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const why = nameProblem(path, k);
    return why !== null ? [{ path: [...path, k].join('.'), reason: why }] : keyNameProblems(v, [...path, k]);
  });
}

/**
 * Every key of `overlay` that the fleet may not set, or not to that value, or not in that spelling,
 * each with its path and why. `base` is the defaults with the site file layered over them (not yet
 * validated).
 */
export function remoteKeyProblems(overlay: Record<string, unknown>, base: unknown): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const walk = (value: unknown, path: string[]) => {
    const badName = nameProblem(path.slice(0, -1), path[path.length - 1]!);
    if (badName !== null) {
      problems.push({ path: path.join('.'), reason: badName });
      return;
    }
    const kind = classify(path);
    // Into objects down to the leaves, so each refused key is named whole (gateway.baseUrl, not gateway).
    if (kind !== 'key' && isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
      return;
    }
    if (kind === 'prefix' && isPlainObject(value)) return;
    if (kind !== 'key') {
      problems.push({
        path: path.join('.'),
        reason:
          'not settable from the fleet: only the site file sets it ' +
          '(the keys the fleet may set are listed in docs/fleet.md)',
      });
      return;
    }
    const why = bounded(path, value, base);
    if (why !== null) problems.push({ path: path.join('.'), reason: why });
  };
  for (const [k, v] of Object.entries(overlay)) walk(v, [k]);
  return problems;
}
