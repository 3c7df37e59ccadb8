/**
 * `qrvend fleet keygen --machine <machineId> --out <file>`: the machine's own key, made at
 * provisioning on the machine itself (docs/relay.md, "What the relay believes"). The private key is
 * written mode 0600 and never overwritten; the line printed is the machine's registry entry part
 * for the operator, who adds it and signs the registry again.
 */
import { writeFileSync } from 'node:fs';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { TOPIC_LEVEL } from '../../fleet/contract/topics.js';
import { generateMachineKey } from '../../trust/machine-key.js';

export function writeMachineKey(machineId: string, out: string): void {
  if (!TOPIC_LEVEL.test(machineId)) throw new QrvendError(ErrorCodes.CLI_USAGE, '--machine: the machine id (fleet.machineId), letters, digits and . _ : - only, 1 to 128');
  const made = generateMachineKey();
  try {
    writeFileSync(out, made.privatePem, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, `cannot write ${out} (${(err as NodeJS.ErrnoException).code ?? 'error'}); an existing key is never overwritten`, {
      hint: 'to rotate, write the new key to another file, add its entry to the registry beside the old one, then switch fleet.machineKeyFile',
    });
  }
  process.stdout.write(`${JSON.stringify({ machineId, machineKeys: [made.entry] })}\n`);
  process.stderr.write(
    `qrvend fleet keygen: machine key written to ${out} (mode 0600; owned by the user who ran this: the agent's user must own it). ` +
      `Set fleet.machineKeyFile to it, and give the operator the line above: its machineKeys go into ${machineId}'s entry of the relay's registry (qrvend relay registry sign).\n`,
  );
}
