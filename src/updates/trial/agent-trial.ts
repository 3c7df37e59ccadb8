/**
 * What the running agent does about a release's trial (release-trial.ts has the files): at start,
 * report a rollback once (alarm UPDATE_ROLLED_BACK, event `rolled-back`) and say when this start
 * is a trial (event `trial`); once the start is healthy, write healthy.json (event `healthy`).
 * The deadline is not the agent's: the root side judges it from outside (qrvend-release).
 */
import type { Logger } from '../../core/log.js';
import type { UpdateState } from '../../fleet/contract/updates.js';
import { rolloutIdOf } from '../files.js';
import {
  markRolledBackReported,
  readHealthy,
  readReleaseRolledBack,
  readReleaseTrial,
  rolledBackDetail,
  writeHealthy,
  type ReleaseTrial,
} from './release-trial.js';

export interface ReleaseTrialOptions {
  version: string;
  updatesDir: string;
  trialFile?: string;
  log: Logger;
  /** UPDATE_ROLLED_BACK raised (detail) or cleared (null). */
  alarm(active: boolean, detail: string | null): void;
  /** An update event on the fleet link's durable event queue, with the rollout it belongs to (null: none known). */
  publish(state: UpdateState, version: string, detail: string | null, rolloutId: string | null): void;
}

export interface ReleaseTrialWatch {
  /** This start is the trial of a new release, not yet confirmed healthy. */
  readonly inTrial: boolean;
  /** Called when the start's health gate passed; confirms the trial once. */
  healthy(): void;
}

export function watchReleaseTrial(o: ReleaseTrialOptions): ReleaseTrialWatch {
  const { log } = o;
  // The rollout that offered the version, from the update agent's state: `qrvend fleet update`
  // follows a machine by its rollout id, and these events are the update's outcome.
  const rolloutOf = (version: string): string | null => rolloutIdOf(o.updatesDir, version);
  const rolledBack = readReleaseRolledBack(o.updatesDir);
  if (rolledBack !== null) {
    const detail = rolledBackDetail(rolledBack);
    o.alarm(true, detail);
    if (!rolledBack.reported) {
      log.error(
        {
          event: 'update.rolled-back',
          code: 'UPDATE_ROLLED_BACK',
          version: rolledBack.version,
          previous: rolledBack.previous,
        },
        detail,
      );
      o.publish('rolled-back', rolledBack.version, rolledBack.reason, rolloutOf(rolledBack.version));
      try {
        markRolledBackReported(o.updatesDir, rolledBack);
      } catch (err) {
        log.warn(
          { err, code: 'INTERNAL' },
          'could not mark the rollback as reported: its event may be sent again at the next start',
        );
      }
    }
  }
  const trial: ReleaseTrial | null =
    o.trialFile !== undefined ? readReleaseTrial(o.version, o.trialFile) : readReleaseTrial(o.version);
  // Healthy already (a power cut before the root side saw it): nothing left to prove.
  let pending = trial !== null && readHealthy(o.updatesDir) !== o.version;
  if (pending && trial !== null) {
    log.info(
      { event: 'update.trial', version: o.version, previous: trial.previous, run: trial.runs },
      `release ${o.version} is on trial (previous: ${trial.previous}); it is kept once ` +
        `the reader is enabled, the ledger writable and the fleet link round trip done`,
    );
    o.publish('trial', o.version, `trial start ${trial.runs} (previous ${trial.previous})`, rolloutOf(o.version));
  }
  return {
    get inTrial() {
      return pending;
    },
    healthy() {
      if (!pending) return;
      pending = false;
      try {
        writeHealthy(o.updatesDir, o.version);
      } catch (err) {
        // The root side then rolls the release back at its deadline: say why before it does.
        log.error(
          { err, code: 'UPDATE_ROLLED_BACK', updatesDir: o.updatesDir },
          `release ${o.version} is healthy but healthy.json could not be written in ${o.updatesDir}: the trial ` +
            `will be rolled back at its deadline; check that the directory is the agent's and the disk not full`,
        );
        return;
      }
      o.alarm(false, null);
      log.info({ event: 'update.healthy', version: o.version }, `release ${o.version} is healthy: kept`);
      o.publish('healthy', o.version, null, rolloutOf(o.version));
    },
  };
}
