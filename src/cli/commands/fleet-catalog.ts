/**
 * `qrvend fleet catalog sign|push|status` (docs/fleet.md, "The catalog document"): signs the
 * catalog documents the console prepared with an operator key of the scope `catalog`, publishes
 * them retained for their machines, and shows per machine what the broker holds and what the
 * machine runs, waits to apply or refused, and why.
 */
import { Option, type Command } from 'commander';
import { addConnectionOptions, connect, usage, wholeNumber, type ConnectionFlags } from './fleet-connection.js';

interface SignFlags {
  signKey?: string;
  keyId?: string;
  out?: string;
  days: string;
}

interface StatusFlags extends ConnectionFlags {
  json?: boolean;
  settle: string;
  wait: string;
}

export function registerFleetCatalog(fleet: Command): void {
  const catalog = fleet
    .command('catalog')
    .description("machines' catalog documents (names, measures, age limits): sign, push retained, status");
  catalog
    .command('sign')
    .description('sign the documents of FILE (one, or {"documents":[...]} as the console exports) with a catalog key')
    .argument('<file>', 'the unsigned documents (JSON)')
    .addOption(
      new Option('--sign-key <file>', 'the operator private key (PEM) of the scope catalog').env(
        'QRVEND_FLEET_SIGN_KEY',
      ),
    )
    .addOption(new Option('--key-id <id>', "the key's id in the machines' trust file").env('QRVEND_FLEET_KEY_ID'))
    .option('--out <file>', 'write the signed documents here (default: standard output)')
    .option('--days <n>', 'how long the signature stays valid, in days (at most 400)', '365')
    .action(signAction);
  addConnectionOptions(
    catalog
      .command('push')
      .description("publish each signed document retained on its machine's catalog topic (exit 69: no broker)")
      .argument('<file>', 'the signed documents (JSON, from qrvend fleet catalog sign)'),
  ).action(pushAction);
  addConnectionOptions(
    catalog
      .command('status')
      .description('per machine: the version pushed, the version it runs, the one waiting, the last refusal and why')
      .argument('[machineId...]', 'only these machines')
      .option('--json', 'print one JSON object')
      .option('--settle <ms>', 'done when nothing new came for this long', '300')
      .option('--wait <ms>', 'at most this long in all', '10000'),
  ).action(statusAction);
}

async function readJson(file: string): Promise<unknown> {
  const { readFileSync, statSync } = await import('node:fs');
  const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
  try {
    if (statSync(file).size > 64 * 1024 * 1024) throw new Error('larger than 64 MiB');
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, `${file}: ${(err as Error).message.slice(0, 200)}`);
  }
}

async function signAction(file: string, flags: SignFlags): Promise<void> {
  const days = await usage(() => wholeNumber(flags.days, '--days', 1, 400));
  const { ErrorCodes, QrvendError } = await import('../../core/errors.js');
  if (flags.signKey === undefined || flags.keyId === undefined)
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      '--sign-key and --key-id are needed (or QRVEND_FLEET_SIGN_KEY/_KEY_ID)',
    );
  const { loadPrivateKey, KEY_ID } = await import('../../trust/keys.js');
  if (!KEY_ID.test(flags.keyId)) throw new QrvendError(ErrorCodes.CLI_USAGE, '--key-id: letters, digits and . _ : -');
  let key;
  try {
    key = loadPrivateKey(flags.signKey);
  } catch (err) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, (err as Error).message);
  }
  const { signCatalogs } = await import('../../fleet/operator/catalog.js');
  const signed = signCatalogs(await readJson(file), {
    keyId: flags.keyId,
    key,
    nowMs: Date.now(),
    lifetimeMs: days * 24 * 3600_000,
  });
  const text = `${JSON.stringify({ documents: signed }, null, 1)}\n`;
  if (flags.out === undefined) process.stdout.write(text);
  else {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(flags.out, text, { mode: 0o644 });
    process.stderr.write(`${signed.length} document(s) signed by ${flags.keyId} into ${flags.out}\n`);
  }
}

async function pushAction(file: string, flags: ConnectionFlags): Promise<void> {
  const { signedCatalogsOf, pushCatalogs } = await import('../../fleet/operator/catalog.js');
  const documents = signedCatalogsOf(await readJson(file));
  const { client, settings } = await connect(flags, 'catalog-push');
  try {
    await pushCatalogs(client, settings.prefix, documents);
  } finally {
    await client.endAsync();
  }
  for (const doc of documents) process.stdout.write(`${doc.machineId}\tversion ${doc.version}\tpushed (retained)\n`);
}

async function statusAction(machines: string[], flags: StatusFlags): Promise<void> {
  const settleMs = await usage(() => wholeNumber(flags.settle, '--settle', 10, 60_000));
  const maxWaitMs = await usage(() => wholeNumber(flags.wait, '--wait', 100, 600_000));
  const { collectCatalogStatus, formatCatalogRows } = await import('../../fleet/operator/catalog.js');
  const { client, settings } = await connect(flags, 'catalog-status');
  try {
    const rows = await collectCatalogStatus(client, {
      prefix: settings.prefix,
      settleMs,
      maxWaitMs,
      ...(machines.length > 0 ? { machines } : {}),
    });
    process.stdout.write(flags.json ? `${JSON.stringify({ machines: rows })}\n` : formatCatalogRows(rows));
  } finally {
    await client.endAsync(true);
  }
}
