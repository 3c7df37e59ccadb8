import type { Command } from 'commander';

interface KeygenFlags {
  out: string;
  id?: string;
  scopes: string;
  comment?: string;
  machine?: string;
}

export function registerFleetKeygen(fleet: Command): void {
  fleet
    .command('keygen')
    .description(
      'make an operator signing key (Ed25519): writes the private key (mode 0600) and prints the entry for the ' +
        "machines' trust file (public key only)",
    )
    .requiredOption(
      '--out <file>',
      "where the private key goes (refused if it exists); keep it on the operator's workstation or signing host, " +
        'never on a machine',
    )
    .option('--id <id>', "the key's id in the trust file (default: key-YYYYMMDD)")
    .option(
      '--scopes <list>',
      'what it may sign, comma-separated: read, operate, configure, update (`qrvend fleet update`, `npm run release ' +
        '-- --sign`); start, registry are for the relay',
      'read',
    )
    .option('--comment <text>', 'free text in the trust-file entry (who holds it)')
    .option(
      '--machine <machineId>',
      "make this machine's own key instead (on the machine, as the agent's user; fleet.machineKeyFile): prints its " +
        "entry for the relay's registry (docs/relay.md)",
    )
    .action(fleetKeygen);
}

async function fleetKeygen(flags: KeygenFlags): Promise<void> {
  const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
  if (flags.machine !== undefined) {
    const { writeMachineKey } = await import('./fleet-machine-key.js');
    return writeMachineKey(flags.machine, flags.out);
  }
  const { generateSigningKey, KEY_ID, SCOPES } = await import('../../trust/keys.js');
  const { writeFileSync } = await import('node:fs');
  const id = flags.id ?? `key-${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`;
  if (!KEY_ID.test(id)) throw new QrvendError(ErrorCodes.CLI_USAGE, '--id: letters, digits and . _ : - only, 1 to 64');
  const scopes = [
    ...new Set(
      flags.scopes
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x.length > 0),
    ),
  ];
  const unknown = scopes.filter((x) => !(SCOPES as readonly string[]).includes(x));
  if (scopes.length === 0 || unknown.length > 0)
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      `--scopes: one or more of ${SCOPES.join(', ')}` +
        (unknown.length > 0 ? `; not a scope: ${unknown.join(', ').slice(0, 100)}` : ''),
    );
  if (flags.comment !== undefined && flags.comment.length > 200)
    throw new QrvendError(ErrorCodes.CLI_USAGE, '--comment: at most 200 characters');
  const key = generateSigningKey();
  try {
    writeFileSync(flags.out, key.privatePem, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      `cannot write ${flags.out} (${(err as NodeJS.ErrnoException).code ?? 'error'}); an existing key is never ` +
        `overwritten`,
    );
  }
  const entry = {
    id,
    publicKey: key.publicKey,
    scopes,
    ...(flags.comment !== undefined ? { comment: flags.comment } : {}),
  };
  process.stdout.write(`${JSON.stringify(entry)}\n`);
  process.stderr.write(
    `qrvend fleet keygen: private key written to ${flags.out} (mode 0600). Add the line above to "keys" in each ` +
      `machine's trust file (fleet.trustFile), then sign with: qrvend fleet cmd --sign-key ${flags.out} --key-id ` +
      `${id} ...\n`,
  );
}
