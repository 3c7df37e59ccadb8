/**
 * `qrvend run`: the daemon as a process. Configuration problems end it with exit code 78 before
 * anything starts (the unit does not restart on 78); SIGTERM and SIGINT stop it gracefully.
 */
import { loadConfig } from '../config/load.js';
import { createLogger } from '../core/log.js';
import { ErrorCodes } from '../core/errors.js';
import { TEST_CLOCK_ENV } from '../core/clock.js';
import { startDaemon } from './daemon.js';

export async function runDaemonProcess(options: { configFile?: string | undefined }): Promise<number> {
  const { config, file, warnings } = loadConfig({ file: options.configFile });
  const log = createLogger({ level: config.log.level, name: 'qrvend' });
  for (const warning of warnings) log.warn({ code: ErrorCodes.CONFIG_EXPOSED, file }, warning);
  if (process.env[TEST_CLOCK_ENV]) log.warn({ code: ErrorCodes.CLOCK_STEP, file: process.env[TEST_CLOCK_ENV] }, `${TEST_CLOCK_ENV} is set: the wall clock is offset by a test clock (tests only)`);
  log.info({ config: file ?? 'defaults', mdbPort: config.mdb.port, gateway: config.gateway.baseUrl }, 'starting');
  const daemon = startDaemon({ config, log, statsIntervalMs: config.log.statsIntervalMs });
  const onSignal = (signal: NodeJS.Signals) => void daemon.stop(`received ${signal}`);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const code = await daemon.done;
  log.flush();
  return code;
}
