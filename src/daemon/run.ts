/**
 * `qrvend run`: the daemon as a process. Configuration problems end it with exit code 78 before
 * anything starts (the unit does not restart on 78); SIGTERM and SIGINT stop it gracefully.
 */
import { loadConfig } from '../config/load.js';
import { createLogger } from '../core/log.js';
import { ErrorCodes } from '../core/errors.js';
import { TEST_CLOCK_ENV } from '../core/clock.js';
import { startDaemon } from './daemon.js';
import { settleRejectedOverlay } from '../fleet/device/config-change.js';
import type { ConfigProblem } from '../config/load.js';

const overlayProblemsText = (problems: ConfigProblem[]) => problems.map((p) => `${p.path}: ${p.reason}`).join('; ').slice(0, 300);

export async function runDaemonProcess(options: { configFile?: string | undefined }): Promise<number> {
  // Problems of the defaults or the site file end the start with 78; the fleet's overlay cannot (see load.ts).
  let loaded = loadConfig({ file: options.configFile, setRejectedOverlayAside: true });
  const rejected = loaded.overlay.status === 'rejected' ? loaded.overlay : null;
  if (rejected !== null && rejected.file !== null) {
    const reason = `the fleet overlay ${rejected.file} was rejected (${overlayProblemsText(rejected.problems)})`;
    // In a trial the previous overlay comes back; otherwise the machine runs on the site file and the defaults.
    try {
      settleRejectedOverlay(rejected.file, reason, new Date());
    } catch (err) {
      // The state directory refuses writes: the alarm is lost, the start is not.
      process.stderr.write(`qrvend: cannot record the rejected fleet overlay: ${(err as Error).message}\n`);
    }
    loaded = loadConfig({ file: options.configFile, setRejectedOverlayAside: true });
  }
  const { config, file, warnings } = loaded;
  const log = createLogger({ level: config.log.level, name: 'qrvend' });
  for (const warning of warnings) log.warn({ code: ErrorCodes.CONFIG_EXPOSED, file }, warning);
  if (rejected !== null) {
    log.error(
      { code: ErrorCodes.CONFIG_OVERLAY_REJECTED, overlay: rejected.file, movedTo: rejected.movedTo, problems: rejected.problems, now: loaded.overlay.status },
      `the fleet's configuration overlay is damaged or invalid: ignored${rejected.movedTo ? ` and moved to ${rejected.movedTo}` : ''}; running on ${loaded.overlay.status === 'applied' ? 'the previous overlay' : 'the site file and the defaults'} (${overlayProblemsText(rejected.problems)})`,
    );
  }
  if (process.env[TEST_CLOCK_ENV]) log.warn({ code: ErrorCodes.CLOCK_STEP, file: process.env[TEST_CLOCK_ENV] }, `${TEST_CLOCK_ENV} is set: the wall clock is offset by a test clock (tests only)`);
  log.info({ config: file ?? 'defaults', layers: loaded.layers.filter((l) => l.status === 'applied').map((l) => l.name), mdbPort: config.mdb.port, gateway: config.gateway.baseUrl }, 'starting');
  const daemon = startDaemon({ config, log, statsIntervalMs: config.log.statsIntervalMs, configFile: file ?? null });
  const onSignal = (signal: NodeJS.Signals) => void daemon.stop(`received ${signal}`);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const code = await daemon.done;
  log.flush();
  return code;
}
