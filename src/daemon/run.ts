/**
 * `qrvend run`: the daemon as a process. Configuration problems end it with exit code 78 before
 * anything starts (the unit does not restart on 78); SIGTERM and SIGINT stop it gracefully.
 *
 * Except in the trial of a change from the fleet: there a start that fails, for whatever reason,
 * ends with 75 (RESTART_EXIT_CODE), so that systemd restarts the agent and the unit's
 * ExecStopPost (packaging/qrvend-trial.sh) brings the previous overlay back. A 78 there would stop
 * systemd with the bad overlay in place, and the machine would stay off.
 *
 * The same in the trial of a new release (docs/releases.md): a 78 or a failed start there ends
 * with 75, so that systemd restarts the agent once the unit's ExecStopPost
 * (packaging/qrvend-release.sh) has brought the previous release back. A configuration the new
 * release refuses is the new release's failure: the previous one ran on it.
 */
import { existsSync } from 'node:fs';
import { loadConfigOffThread } from '../config/load-off-thread.js';
import { pendingFile } from '../config/overlay.js';
import { createLogger } from '../core/log.js';
import { ErrorCodes, isQrvendError } from '../core/errors.js';
import { TEST_CLOCK_ENV } from '../core/clock.js';
import type { startDaemon } from './daemon.js';
import { assertStartable } from '../doctor/start-checks.js';
import { RESTART_EXIT_CODE, settleRejectedOverlay } from '../fleet/machine-link/config-change.js';
import type { ConfigProblem } from '../config/load.js';
import { VERSION } from '../core/version.js';
import { readReleaseTrial } from '../updates/trial/release-trial.js';

/** sysexits EX_CONFIG: the unit's RestartPreventExitStatus. */
const CONFIG_REFUSED_EXIT_CODE = 78;

const overlayProblemsText = (problems: ConfigProblem[]) =>
  problems
    .map((p) => `${p.path}: ${p.reason}`)
    .join('; ')
    .slice(0, 300);

export async function runDaemonProcess(options: { configFile?: string | undefined }): Promise<number> {
  if (readReleaseTrial(VERSION) === null) return runDaemon(options);
  const failed = (why: string): number => {
    process.stderr.write(
      `qrvend: the trial start of release ${VERSION} failed (${why}): exiting ${RESTART_EXIT_CODE} so that the ` +
        `previous release comes back and the agent restarts on it\n`,
    );
    return RESTART_EXIT_CODE;
  };
  try {
    const code = await runDaemon(options);
    return code === CONFIG_REFUSED_EXIT_CODE ? failed(`exit ${code}, configuration refused`) : code;
  } catch (err) {
    return failed(isQrvendError(err) ? err.describe() : String(err));
  }
}

/** The log line of an overlay the loader refused: where it went, and what the agent runs on instead. */
function rejectedOverlayMessage(movedTo: string | null, previousApplied: boolean, problems: ConfigProblem[]): string {
  const movedAside = movedTo ? ` and moved to ${movedTo}` : '';
  const runningOn = previousApplied ? 'the previous overlay' : 'the site file and the defaults';
  return (
    `the fleet's configuration overlay is damaged or invalid: ignored${movedAside}; ` +
    `running on ${runningOn} (${overlayProblemsText(problems)})`
  );
}

async function runDaemon(options: { configFile?: string | undefined }): Promise<number> {
  // Problems of the defaults or the site file end the start with 78; the fleet's overlay cannot (see load.ts).
  // Validated in a short-lived worker (the schema and zod never load in this thread), while this
  // thread loads the daemon's own modules.
  const daemonModule = import('./daemon.js');
  daemonModule.catch(() => {}); // awaited below; a refused configuration must not leave it unhandled
  let loaded = await loadConfigOffThread({ file: options.configFile, setRejectedOverlayAside: true });
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
    loaded = await loadConfigOffThread({ file: options.configFile, setRejectedOverlayAside: true });
  }
  const { config, file, warnings } = loaded;
  const log = createLogger({ level: config.log.level, name: 'qrvend' });
  for (const warning of warnings) log.warn({ code: ErrorCodes.CONFIG_EXPOSED, file }, warning);
  if (rejected !== null) {
    log.error(
      {
        code: ErrorCodes.CONFIG_OVERLAY_REJECTED,
        overlay: rejected.file,
        movedTo: rejected.movedTo,
        problems: rejected.problems,
        now: loaded.overlay.status,
      },
      rejectedOverlayMessage(rejected.movedTo, loaded.overlay.status === 'applied', rejected.problems),
    );
  }
  if (process.env[TEST_CLOCK_ENV])
    log.warn(
      { code: ErrorCodes.CLOCK_STEP, file: process.env[TEST_CLOCK_ENV] },
      `${TEST_CLOCK_ENV} is set: the wall clock is offset by a test clock (tests only)`,
    );
  const overlayFile = loaded.overlay.file;
  // Asked again at the end: a trial confirmed since is over.
  const trialPending = () => overlayFile !== null && existsSync(pendingFile(overlayFile));
  const inTrial = trialPending();
  log.info(
    {
      config: file ?? 'defaults',
      layers: loaded.layers.filter((l) => l.status === 'applied').map((l) => l.name),
      mdbPort: config.mdb.port,
      gateway: config.gateway.baseUrl,
      trial: inTrial,
    },
    'starting',
  );
  const trialFailed = (code: string, why: string): number => {
    log.fatal(
      { event: 'fleet.config.trial-failed', code, exitCode: RESTART_EXIT_CODE },
      `the trial start of a configuration change from the fleet failed (${why}): exiting ${RESTART_EXIT_CODE} so ` +
        `that the unit rolls the change back and restarts`,
    );
    log.flush();
    return RESTART_EXIT_CODE;
  };
  let daemon: ReturnType<typeof startDaemon>;
  try {
    assertStartable(config);
    const { startDaemon } = await daemonModule;
    daemon = startDaemon({ config, log, statsIntervalMs: config.log.statsIntervalMs, configFile: file ?? null });
  } catch (err) {
    if (!inTrial) throw err;
    return isQrvendError(err) ? trialFailed(err.code, err.describe()) : trialFailed('INTERNAL', String(err));
  }
  const onSignal = (signal: NodeJS.Signals) => void daemon.stop(`received ${signal}`);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  const code = await daemon.done;
  log.flush();
  return code === CONFIG_REFUSED_EXIT_CODE && trialPending()
    ? trialFailed(ErrorCodes.CONFIG_INVALID, `the agent stopped with exit ${code}, configuration refused`)
    : code;
}
