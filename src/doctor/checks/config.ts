/** The configuration loads and validates; placeholders from the install template are flagged. */
import { statSync } from 'node:fs';
import { configFileWarning, modeText } from '../../config/file-modes.js';
import type { Check } from '../types.js';

/** The mode text when `file` is readable or writable by others, else null. */
function modeIfExposed(file: string): string | null {
  try {
    const mode = statSync(file).mode & 0o777;
    return mode & 0o006 ? modeText(mode) : null;
  } catch {
    return null;
  }
}

const PLACEHOLDER = 'CHANGE-ME';

export const configCheck: Check = {
  id: 'config',
  title: 'configuration',
  needsConfig: false,
  async run(ctx) {
    const source = ctx.configFile ?? 'built-in defaults (no --config, no QRVEND_CONFIG)';
    if (ctx.config === null) {
      const problems = (ctx.configError?.details?.problems as { path: string; reason: string }[] | undefined) ?? [];
      return {
        status: 'FAIL',
        summary: ctx.configError?.message.split('\n')[0] ?? `cannot load ${source}`,
        action: ctx.configError?.hint ?? 'fix the configuration file',
        details: { file: ctx.configFile ?? null, problems },
      };
    }
    const exposed = ctx.configFile === undefined ? null : configFileWarning(ctx.configFile);
    const keyFile = ctx.config.start.keyFile;
    const keyMode = keyFile === null ? null : modeIfExposed(keyFile);
    if (keyFile !== null && keyMode !== null) {
      return {
        status: 'FAIL',
        summary:
          `Start endpoint TLS key ${keyFile} has mode ${keyMode}: ` +
          `every local user can read it; the daemon refuses to start`,
        action: `chmod 0640 ${keyFile} && chown root:qrvend ${keyFile}`,
        details: { file: ctx.configFile ?? null, keyFile, keyMode },
      };
    }
    const overlay = ctx.configOverlay ?? null;
    if (overlay !== null && overlay.status === 'rejected') {
      return {
        status: 'WARN',
        summary:
          `the fleet overlay ${overlay.file} is ignored (CONFIG_OVERLAY_REJECTED): ` +
          `${overlay.problems.map((p) => `${p.path}: ${p.reason}`).join('; ')}`,
        action:
          `the agent runs on ${source} and the defaults; drop the ` +
          `overlay with: qrvend config reset-remote ${source}`,
        details: { file: ctx.configFile ?? null, overlay: overlay.file, problems: overlay.problems },
      };
    }
    if (exposed !== null) {
      return {
        status: 'WARN',
        summary: exposed,
        action: `chmod 0640 ${ctx.configFile} && chown root:qrvend ${ctx.configFile}`,
        details: { file: ctx.configFile ?? null },
      };
    }
    const placeholders = [
      ['gateway.baseUrl', ctx.config.gateway.baseUrl],
      ['machine.uniQr', ctx.config.machine.uniQr],
    ]
      .filter(([, value]) => value?.includes(PLACEHOLDER))
      .map(([key]) => key as string);
    if (placeholders.length > 0) {
      return {
        status: 'WARN',
        summary: `${source} is valid but still has template values: ${placeholders.join(', ')}`,
        action: `set ${placeholders.join(' and ')} in ${source}, then restart the service`,
        details: { file: ctx.configFile ?? null, placeholders },
      };
    }
    if (ctx.configFile === undefined) {
      return {
        status: 'WARN',
        summary: 'no site configuration given: built-in defaults only',
        action: 'pass --config /etc/qrvend/config.json (what the service uses)',
        details: { file: null },
      };
    }
    const remote =
      overlay?.status === 'applied' && overlay.set !== null
        ? ` (with the fleet overlay ${overlay.file} over it: ${Object.keys(overlay.set).join(', ')})`
        : '';
    return {
      status: 'OK',
      summary: `${ctx.configFile} is valid${remote}`,
      details: { file: ctx.configFile, overlay: overlay?.file ?? null, overlaySets: overlay?.set ?? null },
    };
  },
};
