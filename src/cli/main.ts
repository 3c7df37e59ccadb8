#!/usr/bin/env node
/** Entry point of the `qrvend` executable (package.json "bin"). */
import { CommanderError } from 'commander';
import { isQrvendError } from '../core/errors.js';
import { buildProgram, exitCodeFor } from './program.js';

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  if (!(err instanceof CommanderError)) {
    const text = isQrvendError(err) ? err.describe() : `unexpected error: ${(err as Error)?.stack ?? String(err)}`;
    process.stderr.write(`qrvend: ${text}\n`);
  }
  process.exitCode = exitCodeFor(err);
}
