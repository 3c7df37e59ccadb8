import type { Command } from 'commander';
import { ExitCodes } from '../../core/errors.js';

export function register(parent: Command): void {
  parent
    .command('check')
    .description('validate a configuration file layered over config/default.json, without starting anything')
    .argument('[file]', 'the site configuration file (default: QRVEND_CONFIG, else the defaults alone)')
    .option('--json', 'print the verdict as JSON')
    .action(async (file: string | undefined, opts: { json?: boolean }) => {
      const { loadConfig } = await import('../../config/load.js');
      const { isQrvendError } = await import('../../core/errors.js');
      try {
        const { file: used } = loadConfig({ file });
        const source = used ?? 'config/default.json';
        process.stdout.write(opts.json ? `${JSON.stringify({ ok: true, file: source, problems: [] })}\n` : `config OK: ${source}\n`);
      } catch (err) {
        if (!isQrvendError(err)) throw err;
        const problems = (err.details?.problems as unknown[] | undefined) ?? [];
        if (opts.json) process.stdout.write(`${JSON.stringify({ ok: false, file: file ?? null, code: err.code, problems, message: err.message })}\n`);
        else process.stderr.write(`qrvend: ${err.describe()}\n`);
        process.exitCode = ExitCodes.CONFIG;
      }
    });
}
