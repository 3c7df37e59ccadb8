/**
 * What `qrvend run` refuses to start on, beyond the schema (exit 78): the files the configuration
 * names must be there and readable by the agent. One list, run by the daemon itself before
 * anything starts (run.ts) and by `config.set` on the configuration a change would give
 * (src/fleet/machine-link/config-change.ts), so a change the next start would refuse is refused
 * before it is written instead of stopping the machine (docs/decisions/fleet-trust.md item 4).
 *
 * Each check calls the very reader the daemon uses, so the two cannot drift apart; a new start-up
 * refusal belongs here. Nothing is kept: the contents read are dropped at once. It lives beside the
 * technician checks, below the daemon and the fleet link, so both reach it (CONTRIBUTING.md, "Layout").
 */
import type { QrvendConfig } from '../config/schema.js';
import type { ConfigProblem } from '../config/load.js';
import { ErrorCodes, QrvendError, isQrvendError } from '../core/errors.js';
import { readSecretToken } from '../start/secret-file.js';
import { parseListen, readTlsFiles } from '../start/listen.js';
import { readCa } from '../gateway/ca-file.js';
import { readFleetCredentials, readFleetTlsFiles } from '../config/fleet-credentials.js';
import { loadMachineKey } from '../trust/machine-key.js';

/** A refusal: the key at fault, why (never a file's content), and the error the daemon raises for it. */
export interface StartProblem extends ConfigProblem {
  error: QrvendError;
}

/** `keys`: the keys naming what `run` reads; a problem names the one whose file failed (the first when unknown). */
type Check = { keys: string[]; when: (c: QrvendConfig) => boolean; run: (c: QrvendConfig) => unknown };

/** The daemon refuses to start (exit 78) when one of these throws. */
const START_CHECKS: Check[] = [
  { keys: ['start.secretTokenFile'], when: () => true, run: (c) => readSecretToken(c.start.secretTokenFile) },
  { keys: ['start.listen'], when: (c) => c.start.listen !== null, run: (c) => parseListen(c.start.listen!) },
  {
    keys: ['start.certFile', 'start.keyFile'],
    when: (c) => c.start.certFile !== null && c.start.keyFile !== null,
    run: (c) => readTlsFiles(c.start.certFile!, c.start.keyFile!),
  },
  { keys: ['gateway.caFile'], when: (c) => c.gateway.caFile !== null, run: (c) => readCa(c.gateway.caFile!) },
  // An empty or damaged fleet CA, certificate or key is a provisioning accident (a power cut before
  // the sync) that only a technician fixes: refused at start like the gateway's. A file that cannot
  // be read at all stays a change check below (the link is off, payments go on).
  {
    keys: ['fleet.caFile', 'fleet.certFile', 'fleet.keyFile'],
    when: (c) => c.fleet.url !== null,
    run: (c) => fleetTlsContent(c),
  },
  // Whoever reads the machine key speaks for the machine to the relay: a looser file is refused.
  {
    keys: ['fleet.machineKeyFile'],
    when: (c) => c.fleet.url !== null && c.fleet.machineKeyFile !== null,
    run: (c) => machineKey(c.fleet.machineKeyFile!),
  },
];

function machineKey(file: string): void {
  try {
    loadMachineKey(file);
  } catch (err) {
    throw new QrvendError(ErrorCodes.CONFIG_UNREADABLE, (err as Error).message, {
      hint: "qrvend fleet keygen --machine <machineId> --out <file> as the agent's user (docs/relay.md)",
      details: { file },
    });
  }
}

function fleetTlsContent(config: QrvendConfig): void {
  try {
    readFleetTlsFiles(config.fleet);
  } catch (err) {
    if (isQrvendError(err) && err.details?.errno !== undefined) return;
    throw err;
  }
}

/**
 * Also needed by a configuration change, though not by a start: with unreadable fleet credentials
 * the agent runs and takes payments with its fleet link off, so a trial of the change could never
 * be confirmed over the link.
 */
const CHANGE_CHECKS: Check[] = [
  {
    keys: ['fleet.caFile', 'fleet.certFile', 'fleet.keyFile', 'fleet.passwordFile'],
    when: (c) => c.fleet.url !== null,
    run: (c) => readFleetCredentials(c.fleet),
  },
];

function valueAt(config: QrvendConfig, key: string): unknown {
  return key
    .split('.')
    .reduce<unknown>(
      (at, part) => (typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[part] : undefined),
      config,
    );
}

function run(checks: Check[], config: QrvendConfig): StartProblem[] {
  const problems: StartProblem[] = [];
  for (const check of checks) {
    if (!check.when(config)) continue;
    try {
      check.run(config);
    } catch (err) {
      const error = isQrvendError(err)
        ? err
        : new QrvendError(ErrorCodes.CONFIG_UNREADABLE, `${check.keys[0]}: ${(err as Error).message}`, { cause: err });
      const file = error.details?.file;
      const path = check.keys.find((key) => file !== undefined && valueAt(config, key) === file) ?? check.keys[0]!;
      problems.push({ path, reason: error.message, error });
    }
  }
  return problems;
}

/** What the daemon refuses to start on; empty when it would start. */
export function startProblems(config: QrvendConfig): StartProblem[] {
  return run(START_CHECKS, config);
}

/** What a configuration change must pass: the start checks, and what its trial needs. */
export function changeProblems(config: QrvendConfig): StartProblem[] {
  return [...run(START_CHECKS, config), ...run(CHANGE_CHECKS, config)];
}

/** The daemon at start: throws the first refusal as the reader raised it (its code sets exit 78). */
export function assertStartable(config: QrvendConfig): void {
  const first = startProblems(config)[0];
  if (first !== undefined) throw first.error;
}
