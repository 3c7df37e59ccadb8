/**
 * `qrvend run`: the daemon as a process. Configuration problems end it with exit code 78 before
 * anything starts (the unit does not restart on 78); SIGTERM and SIGINT stop it gracefully.
 */
import { loadConfig } from '../config/load.js';
import { createLogger } from '../core/log.js';
import { ErrorCodes } from '../core/errors.js';
import { TEST_CLOCK_ENV } from '../core/clock.js';
import { startDaemon } from './daemon.js';
import { readPendingChange, rollBack, RESTART_EXIT_CODE } from '../fleet/device/config-change.js';

export async function runDaemonProcess(options: { configFile?: string | undefined }): Promise<number> {
  const siteFile = options.configFile ?? (process.env.QRVEND_CONFIG || undefined);
  let loaded: ReturnType<typeof loadConfig>;
  try {
    loaded = loadConfig({ file: options.configFile });
  } catch (err) {
    // A configuration changed from the fleet that does not even load: the old one comes back at once.
    if (siteFile !== undefined && readPendingChange(siteFile) !== null && rollBack(siteFile, `the new configuration did not load: ${(err as Error).message.slice(0, 300)}`, new Date())) {
      process.stderr.write(`qrvend: the configuration changed from the fleet did not load; the previous file was restored, restarting\n`);
      return RESTART_EXIT_CODE;
    }
    throw err;
  }
  const { config, file, warnings } = loaded;
  const log = createLogger({ level: config.log.level, name: 'qrvend' });
  for (const warning of warnings) log.warn({ code: ErrorCodes.CONFIG_EXPOSED, file }, warning);
  if (process.env[TEST_CLOCK_ENV]) log.warn({ code: ErrorCodes.CLOCK_STEP, file: process.env[TEST_CLOCK_ENV] }, `${TEST_CLOCK_ENV} is set: the wall clock is offset by a test clock (tests only)`);
  log.info({ config: file ?? 'defaults', mdbPort: config.mdb.port, gateway: config.gateway.baseUrl }, 'starting');
  const daemon = startDaemon({ config, log, statsIntervalMs: config.log.statsIntervalMs, configFile: file ?? null });
  const onSignal = (signal: NodeJS.Signals) => void daemon.stop(`received ${signal}`);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const code = await daemon.done;
  log.flush();
  return code;
}
