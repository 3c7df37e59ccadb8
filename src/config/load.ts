/**
 * Loading the configuration: `config/default.json`, then the site file (`--config FILE` or
 * `QRVEND_CONFIG`) layered over it, then the fleet's overlay (`fleet.configOverlay`, only when a
 * site file is used; overlay.ts), then validation. Every problem is reported with the key's path
 * and the reason, all at once, so a technician fixes the file in one go.
 *
 * The defaults and the site file must be valid or nothing starts (exit 78). The overlay came from
 * afar and must not brick the machine: a damaged or invalid one is ignored (reported in
 * `overlay`), and set aside when the caller asks (the daemon does; read-only commands do not).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { configFileWarning } from './file-modes.js';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ConfigSchema, type QrvendConfig } from './schema.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';
import { readOverlay, setOverlayAside, touchesOverlayPath } from './overlay.js';
import { remoteKeyProblems } from './remote-keys.js';
import type { ConfigProblem } from './problem.js';

export const DEFAULT_CONFIG_PATH = fileURLToPath(new URL('../../../config/default.json', import.meta.url));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isPlainObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Objects merge key by key; anything else (arrays, scalars, null) in the overlay replaces. */
export function layer(base: Json, overlay: Json): Json {
  if (!isPlainObject(base) || !isPlainObject(overlay)) return overlay;
  const out: Record<string, Json> = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    out[key] = key in base ? layer(base[key] as Json, value) : value;
  }
  return out;
}

export function readJsonFile(path: string, what: string): Json {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    throw new QrvendError(ErrorCodes.CONFIG_UNREADABLE, `${what} ${path} cannot be read: ${(err as Error).message}`, {
      hint: 'check the path and the file permissions',
      cause: err,
    });
  }
  try {
    return JSON.parse(raw) as Json;
  } catch (err) {
    throw new QrvendError(ErrorCodes.CONFIG_INVALID, `${what} ${path} is not valid JSON: ${(err as Error).message}`, {
      hint: 'fix the JSON syntax (a trailing comma or a missing quote is the usual cause)',
      details: { problems: [{ path: '(file)', reason: 'not valid JSON' }] },
    });
  }
}

export type { ConfigProblem };

function formatPath(path: PropertyKey[]): string {
  return (
    path
      .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
      .join('.')
      .replace(/\.\[/g, '[') || '(root)'
  );
}

export function problemsOf(error: z.ZodError): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: formatPath([...issue.path, key]), reason: 'unknown key' });
    } else {
      out.push({ path: formatPath(issue.path), reason: issue.message });
    }
  }
  return out;
}

/** Validate an already-layered object; throws CONFIG_INVALID listing every problem. */
export function validateConfig(value: unknown, source: string): QrvendConfig {
  const parsed = ConfigSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const problems = problemsOf(parsed.error);
  const lines = problems.map((p) => `  ${p.path}: ${p.reason}`).join('\n');
  throw new QrvendError(ErrorCodes.CONFIG_INVALID, `configuration ${source} is invalid:\n${lines}`, {
    hint: 'fix the keys listed above; see config/default.json and docs/configuration.md for every key',
    details: { problems },
  });
}

export interface LoadOptions {
  /** Site file; falls back to the QRVEND_CONFIG environment variable. */
  file?: string | undefined;
  /** Overrides applied last (tests, the demo). */
  overrides?: Json;
  env?: NodeJS.ProcessEnv;
  /** Move a rejected overlay aside (`<overlay>.rejected`): the daemon at start, nobody else. */
  setRejectedOverlayAside?: boolean;
}

/** What became of the fleet's overlay. */
export interface OverlayState {
  /** fleet.configOverlay, or null when no site file is used (no overlay then). */
  file: string | null;
  status: 'none' | 'absent' | 'applied' | 'rejected';
  /** The keys the overlay set, when applied. */
  set: Record<string, unknown> | null;
  /** Why it was rejected, each with the key path (`(file)` for the file as a whole). */
  problems: ConfigProblem[];
  /** Where a rejected overlay was moved, when it was. */
  movedTo: string | null;
}

export interface LayerReport {
  name: 'defaults' | 'site' | 'fleet overlay' | 'overrides';
  file: string | null;
  status: 'applied' | 'absent' | 'rejected';
}

export interface LoadedConfig {
  config: QrvendConfig;
  /** The site file that was layered over the defaults, if any. */
  file: string | undefined;
  /** Problems that do not stop the daemon (a configuration file writable by everyone). */
  warnings: string[];
  /** The layers in the order applied (later wins). */
  layers: LayerReport[];
  overlay: OverlayState;
}

/** The defaults and the site file (not validated): the base config.set layers its change over. */
export function readBaseLayers(file: string | undefined): { defaults: Json; site: Json | null } {
  const defaults = readJsonFile(DEFAULT_CONFIG_PATH, 'default configuration');
  if (file === undefined) return { defaults, site: null };
  const site = readJsonFile(file, 'configuration file');
  if (!isPlainObject(site)) {
    throw new QrvendError(ErrorCodes.CONFIG_INVALID, `configuration file ${file} must hold a JSON object`, {
      details: { problems: [{ path: '(root)', reason: 'must be a JSON object' }] },
    });
  }
  return { defaults, site };
}

export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const file = options.file ?? (env.QRVEND_CONFIG || undefined);
  const { defaults, site } = readBaseLayers(file);
  const layers: LayerReport[] = [{ name: 'defaults', file: DEFAULT_CONFIG_PATH, status: 'applied' }];
  let base = defaults;
  if (site !== null) {
    base = layer(base, site);
    layers.push({ name: 'site', file: file ?? null, status: 'applied' });
  }
  const withOverrides = (v: Json) => (options.overrides === undefined ? v : layer(v, options.overrides));
  // The defaults and the site file alone must be valid: that is what a rejected overlay falls back to.
  let config = validateConfig(withOverrides(base), file ?? DEFAULT_CONFIG_PATH);
  const overlay: OverlayState = { file: null, status: 'none', set: null, problems: [], movedTo: null };
  if (file !== undefined) {
    if (resolve(config.fleet.configOverlay) === resolve(file)) {
      // config.set would overwrite the site file with the overlay's few keys.
      throw new QrvendError(
        ErrorCodes.CONFIG_INVALID,
        `configuration ${file} is invalid:\n  fleet.configOverlay: must not be the site file itself`,
        {
          hint:
            'leave fleet.configOverlay at its default ' +
            '(/var/lib/qrvend/fleet-config.json) or name a file in the state directory',
          details: { problems: [{ path: 'fleet.configOverlay', reason: 'must not be the site file itself' }] },
        },
      );
    }
    overlay.file = config.fleet.configOverlay;
    const applied = applyOverlay(base, overlay.file, withOverrides);
    if (applied.ok) {
      overlay.status = applied.set === null ? 'absent' : 'applied';
      overlay.set = applied.set;
      if (applied.config !== null) config = applied.config;
    } else {
      overlay.status = 'rejected';
      overlay.problems = applied.problems;
      if (options.setRejectedOverlayAside) overlay.movedTo = setOverlayAside(overlay.file);
    }
    layers.push({
      name: 'fleet overlay',
      file: overlay.file,
      status: overlay.status === 'applied' ? 'applied' : overlay.status === 'rejected' ? 'rejected' : 'absent',
    });
  }
  if (options.overrides !== undefined) layers.push({ name: 'overrides', file: null, status: 'applied' });
  const warning = file === undefined ? null : configFileWarning(file);
  return { config, file, warnings: warning === null ? [] : [warning], layers, overlay };
}

/** One line for a person when the overlay was rejected (read-only commands print it to stderr), else null. */
export function overlayRejectedWarning(overlay: OverlayState): string | null {
  if (overlay.status !== 'rejected') return null;
  return (
    `${ErrorCodes.CONFIG_OVERLAY_REJECTED}: the fleet overlay ${overlay.file} is ignored: ` +
    `${overlay.problems.map((p) => `${p.path}: ${p.reason}`).join('; ')} (qrvend config reset-remote drops it)`
  );
}

/** For the read-only commands (outbox, ledger, qr): they run on what the daemon would, and say so. */
export function warnRejectedOverlay(overlay: OverlayState): void {
  const warning = overlayRejectedWarning(overlay);
  if (warning !== null) process.stderr.write(`qrvend: warning: ${warning}\n`);
}

type OverlayOutcome =
  | { ok: true; set: Record<string, unknown> | null; config: QrvendConfig | null }
  | { ok: false; problems: ConfigProblem[] };

function applyOverlay(base: Json, overlayFile: string, withOverrides: (v: Json) => Json): OverlayOutcome {
  const read = readOverlay(overlayFile);
  if (read.kind === 'absent') return { ok: true, set: null, config: null };
  if (read.kind === 'damaged') return { ok: false, problems: [{ path: '(file)', reason: read.reason }] };
  if (touchesOverlayPath(read.value))
    return {
      ok: false,
      problems: [{ path: 'fleet.configOverlay', reason: 'may be set only by the defaults or the site file' }],
    };
  const parsed = ConfigSchema.safeParse(withOverrides(layer(base, read.value as Json)));
  if (!parsed.success) return { ok: false, problems: problemsOf(parsed.error) };
  // An overlay written before the allowlist (or by hand) is held to it too.
  const refused = remoteKeyProblems(read.value, base);
  if (refused.length > 0) return { ok: false, problems: refused };
  return { ok: true, set: read.value, config: parsed.data };
}
