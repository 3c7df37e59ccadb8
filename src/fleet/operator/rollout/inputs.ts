/** The operator's inputs to `qrvend fleet update`, checked before anything is offered. */
import { ErrorCodes, QrvendError } from '../../../core/errors.js';
import { UpdateManifest } from '../../contract/manifest-schema.js';
import { readManifestFile as readManifestJson } from '../../../updates/manifest.js';
import { TOPIC_LEVEL } from '../../contract/index.js';

/**
 * The signed manifest, schema-checked and not expired. Its signature is checked by each machine
 * against its own trust file (the operator's laptop need not hold one); a machine that refuses it
 * counts as a failure, which is why the first batch is small.
 */
export function readManifestFile(path: string, nowMs: number): UpdateManifest {
  const value = readManifestJson(path);
  const parsed = UpdateManifest.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new QrvendError(
      ErrorCodes.UPDATE_MANIFEST_INVALID,
      `the manifest ${path} is refused: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
      { hint: 'is it signed? `npm run release -- --sign KEY` makes a signed manifest' },
    );
  }
  if (parsed.data.signature.expiresAt <= nowMs) {
    throw new QrvendError(
      ErrorCodes.UPDATE_SIGNATURE_REFUSED,
      `the manifest ${path} expired at ` +
        `${new Date(parsed.data.signature.expiresAt).toISOString()}: every machine would refuse it`,
      { hint: 'sign the release again' },
    );
  }
  return parsed.data;
}

export function parseGrowth(text: string): number {
  if (!/^\d{1,3}(\.\d{1,2})?$/.test(text) || Number(text) < 1)
    throw new RangeError(
      `--growth must be a number from 1 to 100 (1 = batches of the same size), got "${text.slice(0, 32)}"`,
    );
  return Number(text);
}

/** `--machines a,b,c`: machine ids (topic levels), in order, each once. */
export function parseMachineList(text: string): string[] {
  const ids = text
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
  if (ids.length === 0) throw new RangeError('--machines: at least one machine id');
  const bad = ids.find((x) => !TOPIC_LEVEL.test(x));
  if (bad !== undefined)
    throw new RangeError(
      `--machines: ${JSON.stringify(bad.slice(0, 140))} is not a machine id (1-128 letters, digits or ._:-)`,
    );
  return [...new Set(ids)];
}
