/**
 * Remote updates on the emulated Pi (docs/decisions/remote-updates-rollout.md item 6, docs/field-test.md): releases
 * repacked from
 * the one under test (update-releases.ts), served over HTTPS by the host (artifact-server.ts),
 * offered with signed `update.offer` commands over the field test's broker with the operator's
 * own code, as `qrvend fleet update` sends them. Four scenarios, each a step with its deadline:
 *
 * 1. offered while a Static QR session runs: activation waits for its end, the sale settles once,
 *    then the new release is current and its trial ends healthy (events and status say so);
 * 2. a release that exits at start: rolled back by the root side, UPDATE_ROLLED_BACK at the broker;
 * 3. a power cut in the middle of the download, another during the activation: each boot ends with
 *    one working release, the download resumes, the update ends healthy;
 * 4. a tampered artifact, an unsigned and a wrongly signed manifest: refused, nothing activated.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FleetEvent } from '../../src/fleet/contract/index.js';
import {
  RolloutPolicy,
  newRollout,
  parseFailureLimit,
  runRollout,
  selectTargets,
  writeRolloutFile,
  type RolloutRecord,
  type RolloutState,
} from '../../src/fleet/operator/rollout/index.js';
import type { UpdateArch, UpdateManifest } from '../../src/fleet/contract/manifest-schema.js';
import type { TxRecord } from '../../src/sim/gateway/ledger.js';
import type { VmcSimulator } from '../../src/sim/vmc/index.js';
import type { GatewaySimulator } from '../../src/sim/gateway/index.js';
import { signManifest } from '../../src/updates/manifest.js';
import { testKey } from '../fleet/support/operator-keys.js';
import type { ArtifactServer } from './artifact-server.js';
import type { FieldFleet } from './fleet-broker.js';
import type { LeftOnDisk } from './power-cut.js';
import { waitFor, secondsSince } from './proc.js';
import { GUEST_ARTIFACTS } from './qemu.js';
import type { Guest } from './ssh.js';
import type { Steps } from './steps.js';
import { buildUpdateReleases, releaseUnderTest, tamperedCopy, type UpdateRelease } from './update-releases.js';

const UPDATES_DIR = '/var/lib/qrvend/updates';
/**
 * The unit's healthyWithinS (systemd/qrvend.service, as shipped), plus the time a trial start takes to READY under TCG.
 */
const TRIAL_WAIT_S = 180 + 240;
/** Bytes per second while the download is meant to be cut: a 60 MB tarball then takes two minutes. */
const SLOW_BYTES_PER_S = 512 * 1024;
/** The download is cut once this much is on the guest's disk (past the agent's first 4 MB persistence point). */
const CUT_DOWNLOAD_AT = 6 * 1024 * 1024;

export interface UpdateContext {
  steps: Steps;
  runDir: string;
  deb: string;
  /** The machine's architecture (the manifests are for it). */
  arch: UpdateArch;
  timings: Record<string, number>;
  facts: Record<string, unknown>;
  print(line: string): void;
  g(): Guest;
  fleet: FieldFleet;
  artifacts: ArtifactServer;
  vmc: VmcSimulator;
  gateway: GatewaySimulator;
  boot(label: string): Promise<{ toSshS: number }>;
  powerCut(moment: string, expected?: Record<string, string>, show?: readonly string[]): Promise<LeftOnDisk>;
  outcome(text: string): void;
  waitEnable(timeoutMs: number, what: string): Promise<unknown>;
  activeAgain(timeoutMs: number): Promise<unknown>;
  openStatic(): Promise<string>;
  buy(item: number, price: number): Promise<void>;
  tx(id: string): TxRecord | undefined;
  waitTx(id: string, check: (t: TxRecord) => boolean, what: string, timeoutMs?: number): Promise<TxRecord>;
  exactlyOnce(t: TxRecord, op: 'Settlement' | 'Cancel' | 'Void' | null): void;
}

interface Layout {
  current: string;
  previous: string;
  releases: string[];
}

type UpdateEventOf = Extract<FleetEvent, { kind: 'update' }>;
type AlarmEventOf = Extract<FleetEvent, { kind: 'alarm' }>;

export async function runUpdateScenarios(c: UpdateContext): Promise<void> {
  const { steps, fleet, artifacts } = c;
  const facts: Record<string, unknown> = {};
  c.facts.updates = facts;
  const base = releaseUnderTest(c.deb).version;
  const [major, minor] = base.split('.').map(Number);
  // Above the upgrade step's <major>.<minor>.<patch+1>-field1, in offer order.
  const v = (n: number) => `${major}.${minor! + 1}.0-upd.${n}`;

  const releases = await steps.run('update releases repacked and signed on the host', 10 * 60_000, async () => {
    const t0 = performance.now();
    const made = await buildUpdateReleases(
      c.deb,
      c.arch,
      [{ version: v(1) }, { version: v(2), exitsAtStart: true }, { version: v(3) }, { version: v(4) }],
      fleet.releaseKey,
      c.runDir,
    );
    for (const r of made) artifacts.publish(`/releases/${r.name}`, r.file);
    // About 70 MB each: kept with the run only on request, like the overlay.
    steps.onTeardown('the update tarballs', () => {
      if (process.env.QRVEND_FIELD_KEEP !== '1') for (const r of made) rmSync(r.file, { force: true });
    });
    c.timings.updateReleasesBuildS = secondsSince(t0);
    facts.artifactBytes = made[0]!.manifest.size;
    return made;
  });
  const [session, exits, cuts, refused] = releases as [UpdateRelease, UpdateRelease, UpdateRelease, UpdateRelease];
  const urlOf = (r: UpdateRelease, dir = 'releases') =>
    `https://${GUEST_ARTIFACTS.host}:${GUEST_ARTIFACTS.port}/${dir}/${r.name}`;

  // ---- helpers over the guest and the broker ---------------------------------------------------
  const sh = async (cmd: string, timeoutMs = 30_000) => (await c.g().sh(cmd, timeoutMs, true)).stdout.trim();
  const layout = async (): Promise<Layout> => {
    const lines = (
      await sh(
        `printf '%s\\n' "$(readlink /opt/qrvend/current)" "$(readlink /opt/qrvend/previous)"; ls -A ` +
          `/opt/qrvend/releases`,
      )
    ).split('\n');
    const strip = (l: string | undefined) => (l ?? '').replace(/^releases\//, '').trim();
    return { current: strip(lines[0]), previous: strip(lines[1]), releases: lines.slice(2).filter((l) => l !== '') };
  };
  /** `current` leads to a whole release: its entry runs and says the version the link names. */
  const oneWorkingRelease = async (what: string): Promise<Layout> => {
    const l = await layout();
    const says = await sh('/opt/qrvend/bin/qrvend --version', 90_000);
    const leftovers = l.releases.filter((r) => r !== l.current && r !== l.previous);
    if (says !== l.current || leftovers.length > 0)
      throw new Error(
        `${what}: current ${l.current}, previous ${l.previous}, releases [${l.releases.join(' ')}], the launcher ` +
          `says "${says}"`,
      );
    return l;
  };
  const mainPid = () => sh('systemctl show -p MainPID --value qrvend');
  const updates = (version: string, from = 0): UpdateEventOf[] =>
    fleet.events.slice(from).filter((e): e is UpdateEventOf => e.kind === 'update' && e.version === version);
  const statesOf = (version: string, from = 0) => updates(version, from).map((e) => e.state);
  const ENDS = ['refused', 'failed', 'rolled-back'];
  /** The update event `state` of `version` since `from`; an error as soon as the update ended otherwise. */
  const waitUpdate = async (
    version: string,
    state: string,
    from: number,
    timeoutMs: number,
  ): Promise<UpdateEventOf> => {
    const found = await waitFor(
      `the update event ${state} of ${version} at the broker`,
      timeoutMs,
      () => {
        const evs = updates(version, from);
        return evs.find((e) => e.state === state) ?? evs.find((e) => ENDS.includes(e.state));
      },
      500,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; events so far: ${statesOf(version, from).join(', ') || 'none'}`);
    });
    if (found.state !== state)
      throw new Error(
        `update ${version} ended ${found.state} (${found.detail ?? 'no detail'}) instead of reaching ${state}; ` +
          `events: ${statesOf(version, from).join(', ')}`,
      );
    return found;
  };
  /**
   * `qrvend fleet update`'s own rollout (src/fleet/operator/rollout) to this one machine, on a
   * connection of its own: offers the release and follows the machine's events and status until
   * its outcome. Stopped at teardown if the step fails first.
   */
  const rollout = async (r: UpdateRelease, rolloutId: string) => {
    const statuses = new Map(fleet.view.rows().map((row) => [row.machineId, row.status] as const));
    const selection = selectTargets(statuses, null, r.manifest);
    if (selection.targets.length !== 1)
      throw new Error(`the rollout of ${r.version} selects ${JSON.stringify(selection)}`);
    const policy = RolloutPolicy.parse({
      first: 1,
      growth: 2,
      maxFailures: parseFailureLimit('0'),
      batchTimeoutMs: 25 * 60_000,
    });
    const state = newRollout({
      rolloutId,
      prefix: fleet.prefix,
      manifest: r.manifest,
      url: urlOf(r),
      policy,
      selection,
      nowIso: new Date().toISOString(),
    });
    const file = join(c.runDir, `rollout-${rolloutId}.json`);
    writeRolloutFile(file, state);
    const conn = await fleet.connectOperator(`field-rollout-${rolloutId}`);
    let stop = false;
    steps.onTeardown(`rollout ${rolloutId}`, async () => {
      stop = true;
      await conn.client.endAsync(true).catch(() => undefined);
    });
    const records: RolloutRecord[] = [];
    const done: Promise<{ state: RolloutState; how: string }> = runRollout(state, {
      client: conn.client,
      protocol: conn.protocol,
      prefix: fleet.prefix,
      file,
      signer: { keyId: fleet.releaseKey.keyId, key: fleet.releaseKey.key, lifetimeMs: 120_000 },
      replyTimeoutMs: 60_000,
      report: (record) => void records.push(record),
      interrupted: () => stop,
    }).finally(() => conn.client.endAsync(true).catch(() => undefined));
    done.catch(() => {});
    return { done, records, states: () => records.flatMap((x) => (x.type === 'state' ? [x.state] : [])) };
  };
  /** The machine's retained status while it is online (its last will says only `online: false`). */
  const status = () => {
    const st = c.fleet.view.rows()[0]?.status ?? null;
    return st !== null && st.online ? st : null;
  };
  const offer = (r: UpdateRelease, manifest: unknown, url: string, rolloutId: string, signer = fleet.releaseKey) =>
    fleet.command('update.offer', { manifest, url, rolloutId }, 60_000, signer);
  const idle = () =>
    waitFor(
      'the VMC idle with the reader enabled',
      180_000,
      () => (c.vmc.state().reader === 'enabled' && !c.vmc.state().session ? true : undefined),
      200,
    );
  const fleetUp = () =>
    waitFor(
      'a signed ping answered over the fleet link',
      240_000,
      async () =>
        (await fleet.command('ping', undefined, 20_000).catch(() => null))?.reply.ok === true ? true : undefined,
      2000,
    );
  /**
   * Seconds from systemd's `Starting` to the root side's "is current" in this boot: the activation
   * runs in ExecStartPre, inside the unit's TimeoutStartSec=60s (NaN: not found in this boot).
   */
  const activationSeconds = async (version: string): Promise<number> => {
    const lines = (
      await sh(
        `journalctl -b -u qrvend -o short-monotonic --no-pager | grep -E 'Starting qrvend.service|release ` +
          `${version.replaceAll('.', '\\.')} is current'`,
      )
    ).split('\n');
    const at = (l: string | undefined) => Number(/^\[\s*([\d.]+)\]/.exec(l ?? '')?.[1] ?? NaN);
    const done = lines.findLastIndex((l) => l.includes('is current'));
    const started = lines.slice(0, Math.max(done, 0)).findLastIndex((l) => l.includes('Starting qrvend'));
    return done < 0 || started < 0 ? NaN : Math.round((at(lines[done]) - at(lines[started])) * 10) / 10;
  };
  /** The new release's start after an activation: C,1, READY, the trial healthy; events and status say so. */
  const healthyOn = async (r: UpdateRelease, from: number, enabled: Promise<unknown>) => {
    await enabled;
    await c.activeAgain(300_000);
    await waitUpdate(r.version, 'healthy', from, TRIAL_WAIT_S * 1000);
    const l = await oneWorkingRelease(`after the activation of ${r.version}`);
    if (l.current !== r.version) throw new Error(`healthy, yet current is ${l.current}, not ${r.version}`);
    const s = await waitFor(`the retained status to show ${r.version} healthy`, 120_000, () => {
      const st = status();
      return st?.version === r.version && st.update?.state === 'healthy' && st.update.version === r.version
        ? st
        : undefined;
    });
    return {
      layout: l,
      status: { version: s.version, update: s.update },
      activationInStartPreS: await activationSeconds(r.version),
    };
  };

  // ---- 1. offered during a sale ----------------------------------------------------------------
  await steps.run(
    'update offered during a Static QR session: activation waits for its end, the sale settles once, the trial ends ' +
      'healthy',
    20 * 60_000,
    async () => {
      await idle();
      await fleetUp();
      const before = await oneWorkingRelease('before the first update');
      const pidBefore = await mainPid();
      const from = fleet.events.length;
      const t0 = performance.now();
      const txId = await c.openStatic();
      let vends = 0;
      await c.buy(11, 1);
      vends += 1;
      const operator = await rollout(session, 'field-session');
      // The consumer goes on buying (one vend every 15 s keeps the session from its idle timeout)
      // while the release downloads and is verified: the machine is not idle, the update waits.
      let lastVend = performance.now();
      const reached = await waitFor(
        `the update ${session.version} waiting for an idle machine, the session open`,
        10 * 60_000,
        async () => {
          const evs = updates(session.version, from);
          const seen = evs.find((e) => e.state === 'waiting' || ENDS.includes(e.state));
          if (seen) return seen;
          if (performance.now() - lastVend > 15_000 && vends < 8) {
            await c.buy(11 + vends, 1);
            vends += 1;
            lastVend = performance.now();
          }
          return undefined;
        },
        1000,
      );
      if (reached.state !== 'waiting')
        throw new Error(`update ${session.version} ${reached.state}: ${reached.detail ?? ''}`);
      c.timings.updateOfferToWaitingS = secondsSince(t0);
      // A vend while the update waits: the session is served as before.
      await c.buy(20, 1);
      vends += 1;
      const during = { pid: await mainPid(), layout: await layout(), states: statesOf(session.version, from) };
      if (during.pid !== pidBefore || during.layout.current !== before.current || during.states.includes('activating'))
        throw new Error(`the update did not wait for the session: ${JSON.stringify(during)}`);
      if (!c.vmc.state().session) throw new Error('the session ended before the consumer ended it');
      const enabled = c.waitEnable(600_000, `C,1 of ${session.version}`);
      enabled.catch(() => {});
      if (!c.vmc.endSession()) throw new Error('the VMC could not end the session');
      const settled = await c.waitTx(
        txId,
        (x) => x.state === 'settled',
        'the Settlement of the session the update waited for',
        120_000,
      );
      await waitUpdate(session.version, 'activating', from, 300_000);
      const result = await healthyOn(session, from, enabled);
      // The restart into the new release sent nothing twice.
      c.exactlyOnce(c.tx(txId) ?? settled, 'Settlement');
      if (settled.settlement?.amount !== vends)
        throw new Error(`Settlement ${JSON.stringify(settled.settlement)}, ${vends} vends of 1.00`);
      // The operator's rollout saw the outcome: complete, the machine healthy.
      const ended = await waitFor(
        'the rollout to end',
        180_000,
        async () => await Promise.race([operator.done, new Promise<undefined>((r) => setTimeout(r, 1000, undefined))]),
      );
      const target = ended.state.targets[0];
      if (ended.how !== 'complete' || target?.outcome !== 'healthy')
        throw new Error(
          `the rollout ended ${ended.how}, the machine ${target?.outcome ?? 'no outcome'}: ` +
            `${operator.states().join(' > ')}`,
        );
      c.timings.updateDuringSessionS = secondsSince(t0);
      facts.duringSession = {
        version: session.version,
        txId,
        vends,
        settlement: settled.settlement.amount,
        states: statesOf(session.version, from),
        rollout: { how: ended.how, outcome: target.outcome, states: operator.states() },
        ...result,
      };
      c.print(
        `[field] update ${session.version} during a session: states ${statesOf(session.version, from).join(' > ')}; ` +
          `Settlement ${settled.settlement.amount} once`,
      );
    },
  );

  // ---- 2. a release that exits at start -------------------------------------------------------
  await steps.run(
    'a release that exits at start is rolled back by itself (UPDATE_ROLLED_BACK at the broker)',
    15 * 60_000,
    async () => {
      await idle();
      const before = await layout();
      const from = fleet.events.length;
      const t0 = performance.now();
      const enabled = c.waitEnable(600_000, `C,1 after the rollback of ${exits.version}`);
      enabled.catch(() => {});
      const operator = await rollout(exits, 'field-exits');
      const back = await waitUpdate(exits.version, 'rolled-back', from, 900_000);
      if (!statesOf(exits.version, from).includes('activating'))
        throw new Error(`rolled back without an activation: ${statesOf(exits.version, from).join(', ')}`);
      const alarm = await waitFor('the alarm UPDATE_ROLLED_BACK raised at the broker', 120_000, () =>
        fleet.events
          .slice(from)
          .find(
            (e): e is AlarmEventOf => e.kind === 'alarm' && e.code === 'UPDATE_ROLLED_BACK' && e.state === 'raised',
          ),
      );
      await enabled;
      await c.activeAgain(300_000);
      const l = await oneWorkingRelease(`after the rollback of ${exits.version}`);
      if (l.current !== before.current || l.releases.includes(exits.version))
        throw new Error(
          `after the rollback: current ${l.current} (was ${before.current}), releases [${l.releases.join(' ')}]`,
        );
      const st = await waitFor('the retained status with the alarm', 120_000, () => {
        const s = status();
        return s?.version === before.current &&
          s.alarms.includes('UPDATE_ROLLED_BACK') &&
          s.update?.state === 'rolled-back'
          ? s
          : undefined;
      });
      const journal = await sh(
        `journalctl -u qrvend -b --no-pager -o cat | grep -E 'qrvend-release|exits at start on purpose' | tail -n 8 ` +
          `| cut -c1-300`,
      );
      c.timings.updateRolledBackS = secondsSince(t0);
      // The operator's rollout stops on it (no failure allowed): the machine rolled back.
      const ended = await waitFor(
        'the rollout to end',
        180_000,
        async () => await Promise.race([operator.done, new Promise<undefined>((r) => setTimeout(r, 1000, undefined))]),
      );
      if (ended.how !== 'stopped' || ended.state.targets[0]?.outcome !== 'rolled-back')
        throw new Error(
          `the rollout ended ${ended.how}, the machine ${ended.state.targets[0]?.outcome ?? 'no outcome'}: ` +
            `${operator.states().join(' > ')}`,
        );
      facts.exitAtStartRollout = {
        how: ended.how,
        outcome: ended.state.targets[0]?.outcome,
        states: operator.states(),
      };
      facts.exitAtStart = {
        version: exits.version,
        states: statesOf(exits.version, from),
        rolledBackDetail: back.detail,
        alarmDetail: alarm.detail,
        current: l.current,
        statusAlarms: st.alarms,
        journal: journal.split('\n'),
      };
      if (!/exited|exit-code|ended before/i.test(`${back.detail ?? ''} ${alarm.detail ?? ''}`))
        throw new Error(
          `the rollback's reason does not say the release ended at start: ${back.detail} / ${alarm.detail}`,
        );
      c.print(`[field] update ${exits.version} rolled back: ${alarm.detail ?? ''}`);
    },
  );

  // ---- 3. power cuts during the download and during the activation ------------------------------
  await steps.run(
    'power cuts during the download and during the activation: one working release after each boot, the update ends ' +
      'healthy',
    30 * 60_000,
    async () => {
      await idle();
      const before = await layout();
      const from = fleet.events.length;
      const part = `${UPDATES_DIR}/downloads/${cuts.version}/artifact.part`;
      artifacts.throttle(SLOW_BYTES_PER_S);
      const { reply } = await offer(cuts, cuts.manifest, urlOf(cuts), 'field-cuts');
      if (!reply.ok) throw new Error(`update.offer refused: ${reply.error.code}: ${reply.error.message}`);
      const onDisk = await waitFor(
        `${CUT_DOWNLOAD_AT} bytes of ${cuts.version} on the guest's disk`,
        300_000,
        async () => {
          const n = Number((await sh(`stat -c %s ${part} 2>/dev/null || echo 0`)) || 0);
          return n >= CUT_DOWNLOAD_AT ? n : undefined;
        },
        1000,
      );
      const requestsBefore = artifacts.requests.length;
      const leftDownload = await c.powerCut(
        `during the download of ${cuts.version}: ${onDisk} of ${cuts.manifest.size} bytes on disk, the server ` +
          `sending ${SLOW_BYTES_PER_S} B/s`,
        {},
        [`${UPDATES_DIR}/state.json`],
      );
      // Still slow across the boot: the boot's check below must not race the end of the download.
      let enabled = c.waitEnable(600_000, 'C,1 after the download cut');
      enabled.catch(() => {});
      const again = await c.boot('after the download cut');
      c.timings.bootAfterDownloadCutToSshS = again.toSshS;
      await enabled;
      // The boot's one working release: nothing was activated by the cut.
      const afterDownloadCut = await oneWorkingRelease('after the download cut');
      if (afterDownloadCut.current !== before.current && afterDownloadCut.current !== cuts.version)
        throw new Error(`after the download cut: current ${afterDownloadCut.current}`);
      // The download goes on from what the disk kept (Range) once the agent is back; then at full speed.
      const ofCuts = () => artifacts.requests.slice(requestsBefore).filter((r) => r.path.endsWith(cuts.name));
      const ranged = await waitFor(
        'the download resumed after the boot',
        300_000,
        () => ofCuts().find((r) => r.status === 206) ?? (ofCuts().some((r) => r.status === 200) ? null : undefined),
        500,
      );
      artifacts.throttle(null);
      const verified = await waitUpdate(cuts.version, 'verified', from, 600_000);
      const resumed = ofCuts();
      c.outcome(
        `C,1 with ${afterDownloadCut.current} current; the download ` +
          `${ranged ? `resumed with ${ranged.range}` : 'started again from the first byte'} (${resumed.length} ` +
          `request(s) after the boot), verified`,
      );
      // A part the cut took back to nothing is fetched again from the start (docs/updates-on-the-machine.md); either
      // way it must end verified.
      facts.downloadCut = {
        resumedWithRange: ranged?.range ?? null,
        bytesOnDiskAtCut: onDisk,
        stateOnDisk: leftDownload.shown[`${UPDATES_DIR}/state.json`]?.slice(0, 120),
        requestsAfterBoot: resumed,
        verifiedAt: verified.at,
        currentAfterBoot: afterDownloadCut.current,
      };

      // The activation: the agent asks for it and exits; the root side copies, verifies and extracts
      // the release before the next start. The cut comes while that is under way.
      const moment = await waitFor(
        'the activation under way (the root side extracting the release)',
        600_000,
        async () => {
          const r = await sh(
            `if [ -d /opt/qrvend/releases/.incoming-${cuts.version} ]; then echo extracting; elif [ -e ` +
              `/var/lib/qrvend-release/incoming.tar.gz ]; then echo verifying; elif [ "$(readlink ` +
              `/opt/qrvend/current)" = releases/${cuts.version} ]; then echo switched; fi`,
            20_000,
          );
          return r === '' ? undefined : r;
        },
        250,
      );
      const leftActivation = await c.powerCut(
        `during the activation of ${cuts.version} (${
          moment === 'switched'
            ? 'the window was missed: cut after the switch, on the trial start'
            : `the root side ${moment} the release`
        })`,
        {},
        [`${UPDATES_DIR}/activate.json`, '/var/lib/qrvend-release/trial.json'],
      );
      enabled = c.waitEnable(600_000, 'C,1 after the activation cut');
      enabled.catch(() => {});
      const again2 = await c.boot('after the activation cut');
      c.timings.bootAfterActivationCutToSshS = again2.toSshS;
      const result = await healthyOn(cuts, from, enabled);
      const incoming = await sh(
        'ls -A /opt/qrvend/releases | grep -c "^.incoming" || true; ls -A /var/lib/qrvend-release',
      );
      c.outcome(
        `the activation ${moment === 'switched' ? 'was over' : 'was done again'} at the boot: ${cuts.version} ` +
          `current (previous ${result.layout.previous}), its trial healthy; left in the state directory: ` +
          `${incoming.replace(/\n/g, ' ')}`,
      );
      if (!incoming.startsWith('0')) throw new Error(`a half-extracted release is left: ${incoming}`);
      facts.activationCut = { moment, left: leftActivation.shown, states: statesOf(cuts.version, from), ...result };
    },
  );

  // ---- 4. refusals -----------------------------------------------------------------------------
  await steps.run(
    'a tampered artifact, an unsigned and a wrongly signed manifest are refused, nothing activated',
    15 * 60_000,
    async () => {
      await idle();
      const before = await layout();
      const pidBefore = await mainPid();
      const from = fleet.events.length;
      const { signature: _signature, ...unsigned } = refused.manifest;
      const rogue = testKey('not-in-the-trust-file', ['update']);
      const { signature: _s, ...body } = refused.manifest;
      const wronglySigned: UpdateManifest = signManifest(body, {
        keyId: fleet.releaseKey.keyId,
        key: rogue.key,
        nowMs: Date.now(),
        lifetimeMs: 86_400_000,
      });
      const refusals: Record<string, string> = {};
      // The unsigned one as another tool could send it (qrvend's own operator code refuses it before it leaves).
      const offers = [
        [
          'unsigned',
          () =>
            fleet.commandUnchecked(
              'update.offer',
              { manifest: unsigned, url: urlOf(refused), rolloutId: 'field-refusals' },
              60_000,
              fleet.releaseKey,
            ),
        ],
        [
          'signed by a key the machine does not trust',
          async () => (await offer(refused, wronglySigned, urlOf(refused), 'field-refusals')).reply,
        ],
      ] as const;
      for (const [label, send] of offers) {
        const reply = await send();
        if (reply.ok) throw new Error(`a manifest ${label} was accepted: ${JSON.stringify(reply.result)}`);
        if (!reply.error.message.includes('UPDATE_SIGNATURE_REFUSED'))
          throw new Error(`a manifest ${label}: ${reply.error.code}: ${reply.error.message}`);
        refusals[label] = `${reply.error.code}: ${reply.error.message}`;
      }
      const refusedEvents = await waitFor('two refused events at the broker', 120_000, () => {
        const evs = updates(refused.version, from).filter((e) => e.state === 'refused');
        return evs.length >= 2 ? evs : undefined;
      });
      const fromTampered = fleet.events.length;
      // The tampered artifact: a manifest that passes every check, bytes that do not match it.
      const tampered = tamperedCopy(refused.file, join(c.runDir, `tampered-${refused.name}`));
      steps.onTeardown('the tampered tarball', () => rmSync(tampered, { force: true }));
      artifacts.publish(`/tampered/${refused.name}`, tampered);
      const { reply } = await offer(refused, refused.manifest, urlOf(refused, 'tampered'), 'field-tampered');
      if (!reply.ok)
        throw new Error(
          `the offer of the tampered artifact was refused before the download: ${reply.error.code}: ` +
            `${reply.error.message}`,
        );
      const failed = await waitUpdate(refused.version, 'failed', fromTampered, 600_000);
      if (!(failed.detail ?? '').includes('UPDATE_ARTIFACT_MISMATCH'))
        throw new Error(`the tampered artifact failed with ${failed.detail}`);
      const left = await sh(
        `ls -A ${UPDATES_DIR}/downloads/${refused.version} 2>/dev/null; test -e ${UPDATES_DIR}/activate.json && echo ` +
          `activate.json; true`,
      );
      const after = await layout();
      const pidAfter = await mainPid();
      if (
        after.current !== before.current ||
        after.releases.includes(refused.version) ||
        pidAfter !== pidBefore ||
        /artifact\.(part|tar\.gz)|activate\.json/.test(left)
      ) {
        throw new Error(
          `something was activated or kept: current ${after.current} (was ${before.current}), releases ` +
            `[${after.releases.join(' ')}], MainPID ${pidAfter} (was ${pidBefore}), left: ${left}`,
        );
      }
      facts.refusals = {
        version: refused.version,
        replies: refusals,
        refusedEvents: refusedEvents.map((e) => e.detail),
        tampered: failed.detail,
        current: after.current,
      };
      const view = c.gateway.ledger();
      if (view.summary.closedMoreThanOnce.length > 0 || view.summary.conflicts !== 0)
        throw new Error(`gateway ledger after the updates: ${JSON.stringify(view.summary)}`);
    },
  );
}
