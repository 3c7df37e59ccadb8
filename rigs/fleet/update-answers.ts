/**
 * How a simulated machine answers `update.offer` (docs/decisions/remote-updates.md), so `qrvend fleet update` can
 * be tested end to end without a real agent: the command's signature goes through the device's own
 * command gate (decideCommand) and the manifest through the agent's own verifyManifest
 * (src/updates/manifest.ts), so a forged or unsigned offer is refused here as it would be there. Then, instead of
 * downloading and restarting, the machine plays a scripted behaviour as `update` events and its
 * retained status: healthy, refused, fails, rolls back, never answers, or held until the test lets
 * it go on (for interruption tests).
 */
import type { Keyring } from '../../src/trust/keys.js';
import { isQrvendError } from '../../src/core/errors.js';
import { decideCommand, refusalText } from '../../src/fleet/machine-link/command-gate.js';
import { UpdateOfferArgs, type UpdateState } from '../../src/fleet/contract/index.js';
import { verifyManifest } from '../../src/updates/manifest.js';
import { isReleaseVersion } from '../../src/updates/version-order.js';
import type { CommandHandler, CommandOutcome, SimulatedMachine } from './machine.js';

export type UpdateBehaviour =
  /** Goes through every state to `healthy`; its status then reports the new version. */
  | { kind: 'healthy' }
  /** Refuses the offer: an error reply and a `refused` event. */
  | { kind: 'refuse' }
  /** Fails after the download started (a hash mismatch): a `failed` event. */
  | { kind: 'fail' }
  /** The trial is not healthy: `rolled-back` and the alarm UPDATE_ROLLED_BACK. */
  | { kind: 'roll-back' }
  /** Never answers: no reply, no event (a hung agent, a lost command). */
  | { kind: 'silent' }
  /** Stops in `trial` until `release` resolves, then ends `healthy` (a test decides when). */
  | { kind: 'held'; release: Promise<void> };

export interface UpdateAnswerOptions {
  /** The machines' trust file, as loadKeyring reads it. */
  keyring: Keyring;
  behaviour(machineId: string): UpdateBehaviour;
  /** Pause between two scripted states (default 20 ms): events arrive as separate messages. */
  stepMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The `update.offer` handler for SimulatedMachine's `handlers`. */
export function updateOfferHandler(options: UpdateAnswerOptions): CommandHandler {
  // Nonces seen, per process: the device keeps them on disk (src/trust/nonce-book.ts); a simulation needs no restart.
  const nonces = new Set<string>();
  const inProgress = new Map<string, string>();
  return async (args, { machine, signature }): Promise<CommandOutcome> => {
    const behaviour = options.behaviour(machine.machineId);
    if (behaviour.kind === 'silent') return { noReply: true };
    const nowMs = Date.now();
    const gate = decideCommand(
      { keyring: options.keyring, allowUnsignedReads: false },
      { machineId: machine.machineId, name: 'update.offer', args, signature, nowMs, clockUnsynced: false },
      () => true,
    );
    if (gate.kind === 'refuse')
      return { ok: false, code: 'UNAUTHORIZED', message: refusalText(gate.reason, gate.message) };
    if (gate.kind !== 'run' || gate.signature === null)
      return { ok: false, code: 'UNAUTHORIZED', message: 'refused: unsigned' };
    const nonce = `${gate.signature.keyId} ${gate.signature.nonce}`;
    if (nonces.has(nonce))
      return {
        ok: false,
        code: 'UNAUTHORIZED',
        message: refusalText('replayed', 'the nonce was seen before (a replay)'),
      };
    nonces.add(nonce);

    const parsed = UpdateOfferArgs.safeParse(args);
    if (!parsed.success)
      return {
        ok: false,
        code: 'BAD_ARGS',
        message:
          `update.offer: ${parsed.error.issues[0]?.path.join('.') ?? ''}: ` +
          `${parsed.error.issues[0]?.message ?? 'invalid'}`,
      };
    const { manifest, rolloutId } = parsed.data;
    const refuse = async (detail: string): Promise<CommandOutcome> => {
      await machine.updateEvent({
        version: manifest.version,
        state: 'refused',
        rolloutId: rolloutId ?? null,
        progress: null,
        detail,
      });
      return { ok: false, code: 'BAD_ARGS', message: `update refused: ${detail}` };
    };
    try {
      // A simulated machine without a release version or an architecture (the fleet simulation's) takes any.
      const running = isReleaseVersion(machine.status.version) ? machine.status.version : '0.0.0';
      verifyManifest({
        manifest,
        keyring: options.keyring,
        nowMs,
        running,
        arch: machine.status.arch ?? manifest.arch,
      });
    } catch (err) {
      // Worded as the agent words it (src/updates/agent.ts): the code, then why.
      return refuse(isQrvendError(err) ? `${err.code}: ${err.message}` : (err as Error).message);
    }
    if (behaviour.kind === 'refuse') return refuse('refused by the simulation (behaviour refuse)');

    // A repeated offer of what is already under way (a resumed rollout re-sends) starts nothing new.
    const key = `${manifest.version} ${rolloutId ?? ''}`;
    if (inProgress.get(machine.machineId) === key) return { ok: true, result: { accepted: true, already: true } };
    inProgress.set(machine.machineId, key);
    void play(machine, behaviour, manifest.version, manifest.size, rolloutId ?? null, options.stepMs ?? 20).catch(
      () => undefined,
    );
    return { ok: true, result: { accepted: true } };
  };
}

async function play(
  machine: SimulatedMachine,
  behaviour: UpdateBehaviour,
  version: string,
  size: number,
  rolloutId: string | null,
  stepMs: number,
): Promise<void> {
  const say = async (
    state: UpdateState,
    detail: string | null = null,
    progress: { bytes: number; size: number } | null = null,
    statusChange = {},
  ) => {
    await sleep(stepMs);
    await machine.updateEvent({ version, state, rolloutId, progress, detail }, statusChange);
  };
  await say('offered');
  await say('downloading', null, { bytes: 0, size });
  if (behaviour.kind === 'fail') return say('failed', "the artifact's sha256 does not match the manifest (simulated)");
  await say('downloading', null, { bytes: size, size });
  await say('verified');
  await say('waiting', 'waiting for the machine to be idle');
  await say('activating');
  await say('trial');
  if (behaviour.kind === 'roll-back') {
    await machine.alarm(
      'UPDATE_ROLLED_BACK',
      'raised',
      `${version} was not healthy within 60 s (simulated); back on ${machine.status.version}`,
    );
    return say('rolled-back', 'not healthy within 60 s (simulated)');
  }
  if (behaviour.kind === 'held') await behaviour.release;
  await say('healthy', null, null, { version });
}
