import type { Command } from 'commander';
import { ExitCodes } from '../../core/errors.js';
import type { LoadedConfig } from '../../config/load.js';

/** One line per layer, in the order applied (later wins), and the overlay's problems with their key paths. */
function layersText(loaded: LoadedConfig): string {
  const lines = loaded.layers.map((l) => `  ${l.name.padEnd(13)} ${l.status.padEnd(8)} ${l.file ?? ''}`.trimEnd());
  const o = loaded.overlay;
  if (o.status === 'applied' && o.set !== null)
    lines.push(`  fleet overlay sets: ${Object.keys(o.set).join(', ') || '(nothing)'}`);
  for (const p of o.problems) lines.push(`  fleet overlay problem: ${p.path}: ${p.reason}`);
  if (o.status === 'rejected')
    lines.push(
      '  the daemon ignores this overlay and sets it aside at its next start (qrvend config reset-remote drops it now)',
    );
  return `layers (later wins):\n${lines.join('\n')}\n`;
}

export function register(parent: Command): void {
  parent
    .command('check')
    .description(
      'validate a configuration file layered over config/default.json ' +
        '(and the fleet overlay over it), without starting anything',
    )
    .argument('[file]', 'the site configuration file (default: QRVEND_CONFIG, else the defaults alone)')
    .option('--json', 'print the verdict as JSON')
    .action(async (file: string | undefined, opts: { json?: boolean }) => {
      const { loadConfig } = await import('../../config/load.js');
      const { isQrvendError } = await import('../../core/errors.js');
      try {
        const loaded = loadConfig({ file });
        const { file: used, config, warnings } = loaded;
        const source = used ?? 'config/default.json';
        // The secrets the daemon would refuse at start: refused here too, so the check predicts the start.
        const { refuseExposedSecret } = await import('../../config/file-modes.js');
        const { ErrorCodes } = await import('../../core/errors.js');
        refuseExposedSecret(
          config.start.secretTokenFile,
          'Start SecretToken file',
          ErrorCodes.SECRET_UNREADABLE,
          'start.secretTokenFile',
        );
        if (config.start.keyFile !== null)
          refuseExposedSecret(
            config.start.keyFile,
            'Start endpoint TLS key',
            ErrorCodes.CONFIG_UNREADABLE,
            'start.keyFile',
          );
        for (const warning of warnings) process.stderr.write(`qrvend: warning: ${warning}\n`);
        if (loaded.overlay.status === 'rejected') {
          process.stderr.write(
            `qrvend: warning: ${ErrorCodes.CONFIG_OVERLAY_REJECTED}: the fleet overlay ${loaded.overlay.file} ` +
              `is ignored: ${loaded.overlay.problems.map((p) => `${p.path}: ${p.reason}`).join('; ')}\n`,
          );
        }
        // The site file and the defaults are what the daemon starts on: a rejected overlay does not fail the check.
        process.stdout.write(
          opts.json
            ? JSON.stringify({
                ok: true,
                file: source,
                problems: [],
                warnings,
                layers: loaded.layers,
                overlay: loaded.overlay,
              }) + '\n'
            : `config OK: ${source}\n${layersText(loaded)}`,
        );
      } catch (err) {
        if (!isQrvendError(err)) throw err;
        const problems = (err.details?.problems as unknown[] | undefined) ?? [];
        if (opts.json)
          process.stdout.write(
            `${JSON.stringify({ ok: false, file: file ?? null, code: err.code, problems, message: err.message })}` +
              `\n`,
          );
        else process.stderr.write(`qrvend: ${err.describe()}\n`);
        process.exitCode = ExitCodes.CONFIG;
      }
    });
}
