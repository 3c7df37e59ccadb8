/**
 * The rollout file of `qrvend fleet update`: the rollout's whole state (plan.ts), rewritten
 * atomically and fsynced at every step, so the operator's laptop closing at any instant leaves a
 * file `--resume` continues from. It holds the signed manifest and machine ids, never a key.
 */
import { readFileSync, statSync } from 'node:fs';
import { writeFileAtomic } from '../../../core/durable-file.js';
import { ErrorCodes, QrvendError } from '../../../core/errors.js';
import { RolloutState } from './plan.js';

/** 100 000 targets of about 150 bytes each, with room. */
export const MAX_ROLLOUT_FILE_BYTES = 32 * 1024 * 1024;

export function readRolloutFile(path: string): RolloutState {
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > MAX_ROLLOUT_FILE_BYTES)
      throw Object.assign(new Error('too large'), { code: `larger than ${MAX_ROLLOUT_FILE_BYTES} bytes` });
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.FLEET_ROLLOUT_FILE,
      `the rollout file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        hint: 'give the file `qrvend fleet update` named when it started (--state)',
      },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new QrvendError(ErrorCodes.FLEET_ROLLOUT_FILE, `the rollout file ${path} is not JSON`, {
      hint: 'it was damaged or is another file',
    });
  }
  const parsed = RolloutState.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new QrvendError(
      ErrorCodes.FLEET_ROLLOUT_FILE,
      `the rollout file ${path} is not a rollout: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
      {
        hint: 'it was damaged, edited, or written by another version of qrvend',
      },
    );
  }
  return parsed.data;
}

export function writeRolloutFile(path: string, state: RolloutState): void {
  try {
    writeFileAtomic(path, `${JSON.stringify(state, null, 1)}\n`, 0o600);
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.FLEET_ROLLOUT_FILE,
      `the rollout file ${path} cannot be written (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        hint: 'check the directory exists and has room; the rollout stopped where the file last says',
      },
    );
  }
}
