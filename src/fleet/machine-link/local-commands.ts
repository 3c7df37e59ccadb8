/**
 * The commands the fleet worker serves itself (no ledger, no reader): ping, doctor, config.get,
 * config.set, service.restart. The others go to the payment worker; null means "not mine".
 */
import type { Logger } from '../../core/log.js';
import { withoutCredentials } from '../../core/url-credentials.js';
import type { QrvendConfig } from '../../config/schema.js';
import { ConfigGetArgs, ConfigSetArgs } from '../contract/commands.js';
import type { CommandName } from '../contract/topics.js';
import type { CommandErrorCode } from './command-request.js';
import { applyConfigSet } from './config-change.js';
import { checkConfigSet } from './config-set-check.js';
import { readOverlay } from '../../config/overlay.js';

export interface LocalCommandContext {
  config: QrvendConfig;
  configFile: string | null;
  version: string;
  startedAt: string;
  log: Logger;
  restart(reason: string): void;
}

type Outcome = { ok: true; result: unknown } | { ok: false; code: CommandErrorCode; message: string };
export interface Served {
  outcome: Outcome;
  /** Runs once the reply was published (a restart must not beat its own reply). */
  after?: () => void;
}

/** Doctor checks that would open the serial port the running daemon holds are left out. */
const PORT_CHECKS = new Set(['serial', 'board', 'reader']);

function badArgs(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): Outcome {
  const issue = error.issues[0];
  return {
    ok: false,
    code: 'BAD_ARGS',
    message: `args.${issue?.path.map(String).join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
  };
}

function valueAt(config: unknown, key: string): { found: boolean; value: unknown } {
  let at: unknown = config;
  for (const part of key.split('.')) {
    if (typeof at !== 'object' || at === null || !Object.prototype.hasOwnProperty.call(at, part))
      return { found: false, value: undefined };
    at = (at as Record<string, unknown>)[part];
  }
  return { found: true, value: at };
}

export const REDACTED = '(redacted)';

/**
 * Keys whose value is a file path the agent reads or writes: a secret's path (the SecretToken, a
 * TLS key, the broker password) tells whoever reads the reply where to aim, so config.get shows
 * only whether one is set.
 */
const PATH_KEY = /(File|^path|^configOverlay|^framebuffer|^png|^logo)$/;

/** The configuration as config.get shows it: every path redacted, credentials stripped from the broker URL. */
export function redactConfig(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => redactConfig(v));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactConfig(v, k)]));
  }
  if (value === null) return null;
  if (PATH_KEY.test(key)) return REDACTED;
  if (key === 'url' && typeof value === 'string') return withoutCredentials(value) ?? REDACTED;
  return value;
}

/** The doctor's report names files in its summaries: the secrets' paths go, wherever they appear. */
function withoutSecretPaths(report: unknown, config: QrvendConfig): unknown {
  const secrets = [
    config.start.secretTokenFile,
    config.start.keyFile,
    config.fleet.keyFile,
    config.fleet.passwordFile,
  ].filter((p): p is string => p !== null && p.length > 1);
  let text = JSON.stringify(report);
  for (const path of secrets) text = text.split(JSON.stringify(path).slice(1, -1)).join(REDACTED);
  return JSON.parse(text);
}

/** What came from afar: the keys the overlay sets now (they apply at the next start). */
function remoteOf(ctx: LocalCommandContext): { overlayFile: string | null; set: unknown } {
  if (ctx.configFile === null) return { overlayFile: null, set: null };
  const read = readOverlay(ctx.config.fleet.configOverlay);
  return { overlayFile: REDACTED, set: read.kind === 'object' ? redactConfig(read.value) : null };
}

export async function serveLocalCommand(
  ctx: LocalCommandContext,
  name: CommandName,
  args: unknown,
): Promise<Served | null> {
  switch (name) {
    case 'ping':
      return {
        outcome: {
          ok: true,
          result: { pong: true, version: ctx.version, startedAt: ctx.startedAt, at: new Date().toISOString() },
        },
      };
    case 'doctor': {
      const { runDoctor, ALL_CHECKS } = await import('../../doctor/index.js');
      const report = await runDoctor({
        configFile: ctx.configFile ?? undefined,
        checks: ALL_CHECKS.filter((c) => !PORT_CHECKS.has(c.id)),
        checkTimeoutMs: 10_000,
      });
      return { outcome: { ok: true, result: withoutSecretPaths(report, ctx.config) } };
    }
    case 'config.get': {
      const parsed = ConfigGetArgs.safeParse(args);
      if (!parsed.success) return { outcome: badArgs(parsed.error) };
      // The config holds no secret (tokens and passwords live in files it only names), and the names are redacted.
      const shown = redactConfig(ctx.config);
      if (parsed.data.key === undefined)
        return { outcome: { ok: true, result: { config: shown, remote: remoteOf(ctx) } } };
      const { found, value } = valueAt(shown, parsed.data.key);
      if (!found)
        return {
          outcome: {
            ok: false,
            code: 'BAD_ARGS',
            message: `args.key: no configuration key ${JSON.stringify(parsed.data.key.slice(0, 256))}`,
          },
        };
      return { outcome: { ok: true, result: { key: parsed.data.key, value } } };
    }
    case 'config.set': {
      const parsed = ConfigSetArgs.safeParse(args);
      if (!parsed.success) return { outcome: badArgs(parsed.error) };
      if (ctx.configFile === null)
        return {
          outcome: {
            ok: false,
            code: 'UNAVAILABLE',
            message:
              'the agent runs without a site configuration file (so without the fleet overlay); nothing to change',
          },
        };
      const overlayFile = ctx.config.fleet.configOverlay;
      const check = checkConfigSet(ctx.configFile, overlayFile, parsed.data.set);
      if (!check.ok) return { outcome: { ok: false, code: check.code, message: check.message } };
      applyConfigSet(overlayFile, check.overlayText, parsed.data.healthyWithinS, new Date());
      ctx.log.warn(
        { event: 'fleet.config.set', keys: Object.keys(parsed.data.set), healthyWithinS: parsed.data.healthyWithinS },
        'configuration changed from the fleet: restarting to apply it',
      );
      return {
        outcome: { ok: true, result: { written: true, restarting: true, healthyWithinS: parsed.data.healthyWithinS } },
        after: () => ctx.restart('config.set from the fleet'),
      };
    }
    case 'service.restart':
      return {
        outcome: { ok: true, result: { restarting: true } },
        after: () => ctx.restart('service.restart from the fleet'),
      };
    default:
      return null;
  }
}
