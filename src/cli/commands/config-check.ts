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
        const { file: used, config, warnings } = loadConfig({ file });
        const source = used ?? 'config/default.json';
        // The secrets the daemon would refuse at start: refused here too, so the check predicts the start.
        const { refuseExposedSecret } = await import('../../config/file-modes.js');
        const { ErrorCodes } = await import('../../core/errors.js');
        refuseExposedSecret(config.start.secretTokenFile, 'Start SecretToken file', ErrorCodes.SECRET_UNREADABLE, 'start.secretTokenFile');
        if (config.start.keyFile !== null) refuseExposedSecret(config.start.keyFile, 'Start endpoint TLS key', ErrorCodes.CONFIG_UNREADABLE, 'start.keyFile');
        for (const warning of warnings) process.stderr.write(`qrvend: warning: ${warning}\n`);
        process.stdout.write(opts.json ? `${JSON.stringify({ ok: true, file: source, problems: [], warnings })}\n` : `config OK: ${source}\n`);
      } catch (err) {
        if (!isQrvendError(err)) throw err;
        const problems = (err.details?.problems as unknown[] | undefined) ?? [];
        if (opts.json) process.stdout.write(`${JSON.stringify({ ok: false, file: file ?? null, code: err.code, problems, message: err.message })}\n`);
        else process.stderr.write(`qrvend: ${err.describe()}\n`);
        process.exitCode = ExitCodes.CONFIG;
      }
    });
}
