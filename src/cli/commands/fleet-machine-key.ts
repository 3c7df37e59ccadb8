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
  if (!TOPIC_LEVEL.test(machineId)) {
    const what = '--machine: the machine id (fleet.machineId), letters, digits and . _ : - only, 1 to 128';
    throw new QrvendError(ErrorCodes.CLI_USAGE, what);
  }
  const made = generateMachineKey();
  try {
    writeFileSync(out, made.privatePem, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const what = `cannot write ${out} (${code}); an existing key is never overwritten`;
    throw new QrvendError(ErrorCodes.CLI_USAGE, what, {
      hint: 'to rotate: a new key in another file, its entry beside the old one, then fleet.machineKeyFile',
    });
  }
  process.stdout.write(`${JSON.stringify({ machineId, machineKeys: [made.entry] })}\n`);
  process.stderr.write(
    `qrvend fleet keygen: machine key written to ${out} (mode 0600; owned by the user who ran this: ` +
      "the agent's user must own it). Set fleet.machineKeyFile to it, and give the operator the line above: " +
      `its machineKeys go into ${machineId}'s entry of the relay's registry (qrvend relay registry sign).\n`,
  );
}
