import type { Command } from 'commander';
import { ErrorCodes, QrvendError } from '../../core/errors.js';

// Placeholder until the issue that owns this subcommand lands; it fails loudly, never pretends.
export function register(parent: Command): void {
  parent
    .command('doctor')
    .description('(not built yet)')
    .action(() => {
      throw new QrvendError(ErrorCodes.INTERNAL, 'doctor is not built yet');
    });
}
