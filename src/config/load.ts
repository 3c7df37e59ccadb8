/**
 * Loading the configuration: `config/default.json`, then the site file (`--config FILE` or
 * `QRVEND_CONFIG`) layered over it, then validation. Every problem is reported with the key's
 * path and the reason, all at once, so a technician fixes the file in one go.
 */
import { readFileSync } from 'node:fs';
import { configFileWarning } from './file-modes.js';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ConfigSchema, type QrvendConfig } from './schema.js';
import { ErrorCodes, QrvendError } from '../core/errors.js';

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

export interface ConfigProblem {
  /** Dotted key path, e.g. `gateway.timeoutMs`. */
  path: string;
  reason: string;
}

function formatPath(path: PropertyKey[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[') || '(root)';
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
}

export interface LoadedConfig {
  config: QrvendConfig;
  /** The site file that was layered over the defaults, if any. */
  file: string | undefined;
  /** Problems that do not stop the daemon (a configuration file writable by everyone). */
  warnings: string[];
}

export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const file = options.file ?? (env.QRVEND_CONFIG || undefined);
  let merged = readJsonFile(DEFAULT_CONFIG_PATH, 'default configuration');
  if (file !== undefined) {
    const site = readJsonFile(file, 'configuration file');
    if (!isPlainObject(site)) {
      throw new QrvendError(ErrorCodes.CONFIG_INVALID, `configuration file ${file} must hold a JSON object`, {
        details: { problems: [{ path: '(root)', reason: 'must be a JSON object' }] },
      });
    }
    merged = layer(merged, site);
  }
  if (options.overrides !== undefined) merged = layer(merged, options.overrides);
  const config = validateConfig(merged, file ?? DEFAULT_CONFIG_PATH);
  const warning = file === undefined ? null : configFileWarning(file);
  return { config, file, warnings: warning === null ? [] : [warning] };
}
