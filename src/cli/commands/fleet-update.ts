import { Option, type Command } from 'commander';
import {
  addConnectionOptions,
  connect,
  SIGNATURE_FORMAT_HELP,
  signerOf,
  usage,
  wholeNumber,
  type ConnectionFlags,
} from './fleet-connection.js';
import { ROLLOUT_ID } from '../../fleet/contract/rollout-id.js';
import type { CommandSigner } from '../../fleet/operator/command.js';
import type { RolloutState } from '../../fleet/operator/rollout/plan.js';
// Light and loaded by src/cli/program.ts anyway: not the heavy code an action imports late (CONTRIBUTING.md).
import { ErrorCodes, QrvendError } from '../../core/errors.js';

interface UpdateFlags extends ConnectionFlags {
  manifest?: string;
  url?: string;
  artifactUrl?: string;
  machines?: string;
  all?: boolean;
  resume?: string;
  state?: string;
  rolloutId?: string;
  first: string;
  growth: string;
  maxFailures: string;
  batchTimeout: string;
  replyTimeout: string;
  signKey?: string;
  signatureFormat?: string;
  keyId?: string;
  ttl: string;
  settle: string;
  wait: string;
  json?: boolean;
}

/** Exit codes of `qrvend fleet update` beyond the usual ones (docs/updates.md). */
const EXIT_STOPPED = 1;
const EXIT_INTERRUPTED = 130;

/** https://, or http:// to a loopback host (tests), as the machines accept it (src/fleet/contract/updates.ts). */
function checkArtifactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('--artifact-url is not a URL');
  }
  const loopback =
    parsed.hostname === 'localhost' ||
    parsed.hostname === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(parsed.hostname);
  if (!(parsed.protocol === 'https:' || (parsed.protocol === 'http:' && loopback)))
    throw new Error('--artifact-url must be https:// (plain http:// only to a loopback host)');
  if (parsed.username !== '' || parsed.password !== '') throw new Error('--artifact-url must not carry credentials');
  if (url.length > 2048) throw new Error('--artifact-url is longer than 2048 characters');
  return url;
}

export function registerUpdate(fleet: Command): void {
  addConnectionOptions(
    fleet
      .command('update')
      .description(
        'roll a signed release out in stages: offer it to a first batch, wait for each machine to be healthy, grow ' +
          'the batches, stop when failures pass --max-failures (exit 0: complete, 1: stopped, 130: interrupted, ' +
          'resume with --resume)',
      )
      .option('--manifest <file>', 'the signed manifest (`npm run release -- --sign`)')
      .option('--artifact-url <url>', 'where the machines fetch the release tarball: https://... (the broker is --url)')
      .option('--machines <ids>', 'the machines, comma-separated, in the order to offer')
      .option('--all', 'every machine with a retained status under the prefix')
      .option(
        '--resume <file>',
        'continue an interrupted rollout from its file (the manifest, machines and policy are in it)',
      )
      .option(
        '--state <file>',
        "where the rollout's state is kept (default ./qrvend-rollout-<id>.json; never overwritten)",
      )
      .option('--rollout-id <id>', 'a name for this rollout, echoed by the machines (default <version>-<UTC time>)')
      .option('--first <n>', 'machines in the first batch', '1')
      .option('--growth <factor>', 'each batch is this many times the one before', '2')
      .option(
        '--max-failures <n|p%>',
        'stop when more machines than this fail (a count, or a share of the targets like 10%)',
        '0',
      )
      .option(
        '--batch-timeout <s>',
        'a machine with no outcome this long after its batch was offered counts as failed',
        '1800',
      )
      .option('--reply-timeout <ms>', "how long to wait for each machine's reply to the offer", '10000')
      .addOption(
        new Option(
          '--sign-key <file>',
          'operator private key with the scope update (PEM, `qrvend fleet keygen --scopes update`)',
        ).env('QRVEND_FLEET_SIGN_KEY'),
      )
      .addOption(
        new Option('--key-id <id>', "the id of that key in the machines' trust file").env('QRVEND_FLEET_KEY_ID'),
      )
      .option('--ttl <s>', 'how long each signed offer stays valid, in seconds (at most 900)', '60')
      .option('--signature-format <n>', SIGNATURE_FORMAT_HELP)
      .option('--settle <ms>', 'reading the retained statuses: done when none came for this long', '300')
      .option('--wait <ms>', 'reading the retained statuses: at most this long', '10000')
      .option('--json', 'print NDJSON: the plan, each batch and state change, the summary'),
  ).action(fleetUpdate);
}

type Rollout = typeof import('../../fleet/operator/rollout/index.js');

interface RolloutRun {
  state: RolloutState;
  file: string;
  signer: CommandSigner;
  replyTimeoutMs: number;
}

async function fleetUpdate(flags: UpdateFlags): Promise<void> {
  const ttlS = await usage(() => wholeNumber(flags.ttl, '--ttl', 1, 900));
  const replyTimeoutMs = await usage(() => wholeNumber(flags.replyTimeout, '--reply-timeout', 100, 600_000));
  const settleMs = await usage(() => wholeNumber(flags.settle, '--settle', 10, 60_000));
  const maxWaitMs = await usage(() => wholeNumber(flags.wait, '--wait', 100, 600_000));
  if (flags.signKey === undefined || flags.keyId === undefined)
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      'an update offer is signed: give --sign-key and --key-id (a key with the scope update)',
    );
  const signer = (await signerOf(flags, ttlS))!;
  const rollout = await import('../../fleet/operator/rollout/index.js');
  const resumed = flags.resume !== undefined;
  const { state, file } = resumed
    ? resumeRollout(flags, rollout)
    : await planRollout(flags, rollout, { settleMs, maxWaitMs });
  process.stdout.write(
    flags.json
      ? rollout.rolloutJsonLine({ type: 'plan', state, file })
      : rollout.formatRolloutPlan(state, file, resumed),
  );
  if (state.ended !== null) {
    process.stdout.write(
      flags.json
        ? rollout.rolloutJsonLine({ type: 'summary', state })
        : `this rollout ended ${state.ended.at} (${state.ended.how}): ` +
            `${state.ended.reason}\n${rollout.formatRolloutSummary(state)}`,
    );
    process.exitCode = state.ended.how === 'complete' ? 0 : EXIT_STOPPED;
    return;
  }
  await driveRollout(flags, rollout, { state, file, signer, replyTimeoutMs });
}

/** `--resume FILE`: the manifest, artifact URL, machines and policy come from the file alone. */
function resumeRollout(flags: UpdateFlags, rollout: Rollout): { state: RolloutState; file: string } {
  if (
    flags.manifest !== undefined ||
    flags.artifactUrl !== undefined ||
    flags.machines !== undefined ||
    flags.all === true ||
    flags.state !== undefined
  ) {
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      '--resume takes the manifest, artifact URL, machines and policy from its file: give none of --manifest, ' +
        '--artifact-url, --machines, --all, --state',
    );
  }
  const file = flags.resume!;
  const state = rollout.readRolloutFile(file);
  if (flags.prefix !== state.prefix)
    process.stderr.write(
      `qrvend fleet update: the rollout was planned under the prefix ${state.prefix}; --prefix ${flags.prefix} ` +
        `is not used\n`,
    );
  return { state, file };
}

/** A new rollout: its inputs checked, its targets chosen from the retained statuses, its file written. */
async function planRollout(
  flags: UpdateFlags,
  rollout: Rollout,
  reading: { settleMs: number; maxWaitMs: number },
): Promise<{ state: RolloutState; file: string }> {
  if (flags.manifest === undefined || flags.artifactUrl === undefined)
    throw new QrvendError(ErrorCodes.CLI_USAGE, 'give --manifest and --artifact-url (or --resume FILE)');
  if ((flags.machines === undefined) === (flags.all !== true))
    throw new QrvendError(ErrorCodes.CLI_USAGE, 'give either --machines a,b,c or --all');
  const manifest = rollout.readManifestFile(flags.manifest, Date.now());
  const url = await usage(() => checkArtifactUrl(flags.artifactUrl!));
  const policy = await usage(() =>
    rollout.RolloutPolicy.parse({
      first: wholeNumber(flags.first, '--first', 1, 100_000),
      growth: rollout.parseGrowth(flags.growth),
      maxFailures: rollout.parseFailureLimit(flags.maxFailures),
      batchTimeoutMs: wholeNumber(flags.batchTimeout, '--batch-timeout', 1, 7 * 24 * 3600) * 1000,
    }),
  );
  const wanted = flags.machines === undefined ? null : await usage(() => rollout.parseMachineList(flags.machines!));
  const rolloutId = flags.rolloutId ?? `${manifest.version}-${new Date().toISOString().replace(/[-:]|\.\d+/g, '')}`;
  if (!ROLLOUT_ID.test(rolloutId))
    throw new QrvendError(ErrorCodes.CLI_USAGE, '--rollout-id: letters, digits and . _ : - only, 1 to 64');
  const file = flags.state ?? `qrvend-rollout-${rolloutId}.json`;
  const { existsSync } = await import('node:fs');
  if (existsSync(file))
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      `${file} exists: resume that rollout with --resume ${file}, or name another file with --state`,
    );
  let state: RolloutState;
  const { client } = await connect(flags, 'update-plan');
  try {
    const { collectFleetStatus } = await import('../../fleet/operator/index.js');
    const { view } = await collectFleetStatus(client, { prefix: flags.prefix, ...reading });
    const statuses = new Map([...view.machines.values()].map((row) => [row.machineId, row.status] as const));
    const selection = rollout.selectTargets(statuses, wanted, manifest);
    state = rollout.newRollout({
      rolloutId,
      prefix: flags.prefix,
      manifest,
      url,
      policy,
      selection,
      nowIso: new Date().toISOString(),
    });
  } finally {
    await client.endAsync(true);
  }
  rollout.writeRolloutFile(file, state);
  return { state, file };
}

/** Runs the rollout until it ends or the operator interrupts it (Ctrl-C: the offers in flight finish first). */
async function driveRollout(flags: UpdateFlags, rollout: Rollout, run: RolloutRun): Promise<void> {
  const out = (text: string) => process.stdout.write(text);
  const { state, file } = run;
  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
    process.stderr.write('qrvend fleet update: stopping after the offers in flight; the state is kept\n');
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  // Reconnects after a broker blip: the subscriptions come back and the retained statuses with them, so no outcome is
  // missed.
  const { client, protocol } = await connect(flags, 'update', 2_000);
  client.on('offline', () => process.stderr.write('qrvend fleet update: broker connection lost; reconnecting\n'));
  client.on('connect', () => process.stderr.write('qrvend fleet update: connected again\n'));
  try {
    const result = await rollout.runRollout(state, {
      client,
      protocol,
      prefix: state.prefix,
      file,
      signer: run.signer,
      replyTimeoutMs: run.replyTimeoutMs,
      report: (record) => out(flags.json ? rollout.rolloutJsonLine(record) : rollout.formatRolloutRecord(record)),
      interrupted: () => interrupted,
    });
    out(
      flags.json
        ? rollout.rolloutJsonLine({ type: 'summary', state: result.state })
        : rollout.formatRolloutSummary(result.state),
    );
    if (result.how === 'interrupted') {
      process.stderr.write(
        `qrvend fleet update: interrupted; resume with: qrvend fleet update --resume ${file} --sign-key ` +
          `${flags.signKey} --key-id ${flags.keyId} (and the broker options)\n`,
      );
      process.exitCode = EXIT_INTERRUPTED;
    } else {
      process.exitCode = result.how === 'complete' ? 0 : EXIT_STOPPED;
    }
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await client.endAsync(true);
  }
}
