/**
 * The check of a `config.set` from the fleet before anything is written (config-change.ts has the
 * files and the trial): the change layered over the overlay, the site file and the defaults,
 * validated by the config schema, held to what the fleet may set, then put through the daemon's
 * own start checks. Runs in the fleet worker.
 */
import { existsSync } from 'node:fs';
import { layer, problemsOf, readBaseLayers } from '../../config/load.js';
import { pendingFile, readOverlay, touchesOverlayPath } from '../../config/overlay.js';
import { ConfigSchema } from '../../config/schema.js';
import { keyNameProblems, remoteKeyProblems } from '../../config/remote-keys.js';
import { changeProblems } from '../../doctor/start-checks.js';

type Json = Parameters<typeof layer>[0];

export type ConfigSetCheck =
  | { ok: true; overlayText: string }
  | { ok: false; code: 'CONFIG_INVALID' | 'BAD_ARGS' | 'BUSY'; message: string; paths: string[] };

const problemsText = (problems: Array<{ path: string; reason: string }>) =>
  problems
    .map((p) => `${p.path}: ${p.reason}`)
    .join('; ')
    .slice(0, 1000);

/**
 * The overlay with `set` layered over it, validated over the site file and the defaults as the
 * daemon would load them, then put through the daemon's start checks. The overlay keeps only
 * what the fleet set, accumulated over changes.
 */
export function checkConfigSet(siteFile: string, overlayFile: string, set: Record<string, unknown>): ConfigSetCheck {
  if (touchesOverlayPath(set)) {
    return {
      ok: false,
      code: 'BAD_ARGS',
      message: 'args.set.fleet.configOverlay: may be set only by the defaults or the site file, never from the fleet',
      paths: ['fleet.configOverlay'],
    };
  }
  const badNames = keyNameProblems(set);
  if (badNames.length > 0) {
    const text = badNames
      .map((p) => `args.set.${p.path}: ${p.reason}`)
      .join('; ')
      .slice(0, 1000);
    return { ok: false, code: 'BAD_ARGS', message: text, paths: badNames.map((p) => p.path) };
  }
  // A change over an unconfirmed one would make the unconfirmed one what a rollback restores.
  if (existsSync(pendingFile(overlayFile))) {
    return {
      ok: false,
      code: 'BUSY',
      message:
        'an earlier configuration change is still on trial; send this one once it is confirmed or rolled back (alarm ' +
        'CONFIG_ROLLED_BACK)',
      paths: [],
    };
  }
  const { defaults, site } = readBaseLayers(siteFile);
  const current = readOverlay(overlayFile);
  // A damaged overlay is what the daemon set aside at its start; the change starts afresh.
  const overlay = layer(current.kind === 'object' ? (current.value as Json) : {}, set as Json);
  const base = layer(defaults, site ?? {});
  const parsed = ConfigSchema.safeParse(layer(base, overlay));
  const problems = parsed.success ? [] : problemsOf(parsed.error);
  // First what the fleet may set at all (src/config/remote-keys.ts), so a key that is not the
  // fleet's is refused as such whatever the schema says of its value; a key no configuration has
  // (a typo) is named as unknown, which helps the operator more.
  const notAllowed = remoteKeyProblems(overlay as Record<string, unknown>, base);
  if (notAllowed.length > 0) {
    const unknown = new Map(problems.filter((p) => p.reason.startsWith('unknown key')).map((p) => [p.path, p.reason]));
    const text = notAllowed
      .map((p) => `args.set.${p.path}: ${unknown.get(p.path) ?? p.reason}`)
      .join('; ')
      .slice(0, 1000);
    return { ok: false, code: 'BAD_ARGS', message: text, paths: notAllowed.map((p) => p.path) };
  }
  if (!parsed.success) {
    return { ok: false, code: 'CONFIG_INVALID', message: problemsText(problems), paths: problems.map((p) => p.path) };
  }
  // What the next start would refuse (the daemon's own start checks): answered now, not found out by a dead agent.
  const refused = changeProblems(parsed.data);
  if (refused.length > 0) {
    return {
      ok: false,
      code: 'CONFIG_INVALID',
      message: `the agent would not start on it: ${problemsText(refused)}`,
      paths: refused.map((p) => p.path),
    };
  }
  return { ok: true, overlayText: `${JSON.stringify(overlay, null, 2)}\n` };
}
