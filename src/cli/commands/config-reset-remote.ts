/**
 * `qrvend config reset-remote`: a technician drops every change the fleet made (config.set) by
 * removing the fleet overlay; a copy is kept beside it. Applied at the next start of the agent.
 */
import type { Command } from 'commander';
import { ExitCodes } from '../../core/errors.js';

export function register(parent: Command): void {
  parent
    .command('reset-remote')
    .description(
      'drop the configuration changes made from the fleet (config.set): ' +
        'removes the fleet overlay, keeping a copy; restart the agent to apply',
    )
    .argument('[file]', 'the site configuration file that names the overlay (default: QRVEND_CONFIG)')
    .option('--json', 'print the outcome as JSON')
    .action(async (file: string | undefined, opts: { json?: boolean }) => {
      const { loadConfig } = await import('../../config/load.js');
      const { isQrvendError } = await import('../../core/errors.js');
      const { resetRemote } = await import('../../fleet/machine-link/config-change.js');
      try {
        const loaded = loadConfig({ file });
        const overlay = loaded.overlay.file;
        if (overlay === null) {
          process.stderr.write(
            'qrvend: no site configuration file given (argument or ' +
              'QRVEND_CONFIG): without one there is no fleet overlay\n',
          );
          process.exitCode = ExitCodes.USAGE;
          return;
        }
        const copy = resetRemote(overlay, new Date());
        if (opts.json) process.stdout.write(`${JSON.stringify({ ok: true, overlay, removed: copy !== null, copy })}\n`);
        else if (copy === null)
          process.stdout.write(`no fleet overlay at ${overlay}: nothing to drop (trial and rollback marks cleared)\n`);
        else
          process.stdout.write(
            `fleet overlay ${overlay} removed; a copy is at ${copy}` +
              `\nrestart the agent to apply: systemctl restart qrvend\n`,
          );
      } catch (err) {
        if (isQrvendError(err)) {
          process.stderr.write(`qrvend: ${err.describe()}\n`);
          process.exitCode = ExitCodes.CONFIG;
          return;
        }
        const e = err as NodeJS.ErrnoException;
        if (typeof e.code === 'string' && e.code.startsWith('E')) {
          process.stderr.write(
            `qrvend: cannot remove the fleet overlay: ${e.message} (run as the ` +
              `qrvend user or root: sudo -u qrvend qrvend config reset-remote ...)\n`,
          );
          process.exitCode = ExitCodes.IO;
          return;
        }
        throw err;
      }
    });
}
