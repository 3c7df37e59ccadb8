/** The configuration loads and validates; placeholders from the install template are flagged. */
import type { Check } from '../types.js';

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
    const placeholders = [
      ['gateway.baseUrl', ctx.config.gateway.baseUrl],
      ['machine.uniQr', ctx.config.machine.uniQr],
    ].filter(([, value]) => value?.includes(PLACEHOLDER)).map(([key]) => key as string);
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
    return { status: 'OK', summary: `${ctx.configFile} is valid`, details: { file: ctx.configFile } };
  },
};
