/** Builds what the checks share: the loaded configuration (or why it did not load) and the ledger look. */
import { existsSync } from 'node:fs';
import { loadConfig } from '../config/load.js';
import { isQrvendError, QrvendError, ErrorCodes } from '../core/errors.js';
import { inspectLedger } from '../ledger/inspect.js';
import type { DoctorContext, LedgerLook } from './types.js';

export interface ContextOptions {
  configFile?: string | undefined;
  env?: NodeJS.ProcessEnv;
  now?: () => Date;
}

export function createDoctorContext(options: ContextOptions = {}): DoctorContext {
  const env = options.env ?? process.env;
  const configFile = options.configFile ?? (env.QRVEND_CONFIG || undefined);
  let ctx: Omit<DoctorContext, 'ledger'>;
  try {
    const loaded = loadConfig({ file: configFile, env });
    ctx = {
      configFile: loaded.file,
      config: loaded.config,
      configError: null,
      configOverlay: loaded.overlay,
      env,
      now: options.now ?? (() => new Date()),
      facts: {},
    };
  } catch (err) {
    const error = isQrvendError(err)
      ? err
      : new QrvendError(ErrorCodes.CONFIG_UNREADABLE, String((err as Error)?.message ?? err));
    ctx = { configFile, config: null, configError: error, env, now: options.now ?? (() => new Date()), facts: {} };
  }

  let look: LedgerLook | undefined;
  const ledger = (): LedgerLook => {
    if (look !== undefined) return look;
    const path = ctx.config?.store.path;
    if (path === undefined) look = { kind: 'error', message: 'no configuration' };
    else if (!existsSync(path)) look = { kind: 'missing', path };
    else {
      try {
        look = { kind: 'inspected', inspection: inspectLedger(path) };
      } catch (err) {
        look = { kind: 'error', message: isQrvendError(err) ? err.describe() : (err as Error).message };
      }
    }
    return look;
  };
  return { ...ctx, ledger };
}
