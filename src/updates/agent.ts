/**
 * The machine's side of `update.offer` (docs/decisions/remote-updates.md), inside the fleet worker: checks the
 * offer and its manifest before anything is fetched, answers the command at once, then downloads
 * (download.ts), verifies, and hands the verified version to the main thread, which activates it
 * at the next idle moment (activation.ts). Every change of state is an `update` event (durable,
 * through the payment side's event queue) and the retained status's `update` member.
 *
 * A second offer while one is under way: the same version is answered `accepted, already` and
 * starts nothing; a newer version replaces the one under way (its download is stopped, its files
 * stay until the next offer's cleanup); an older one is refused.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isQrvendError } from '../core/errors.js';
import { removeDurably, writeFileAtomic } from '../core/durable-file.js';
import type { UpdateEventFacts } from '../ipc/messages.js';
import type { Keyring } from '../trust/keys.js';
import { UpdateOfferArgs, type UpdateState, type UpdateStatus } from '../fleet/contract/updates.js';
import { downloadArtifact, checkDownloadUrl, type DownloadOptions } from './download.js';
import { machineArch, verifyManifest } from './manifest.js';
import { compareVersions } from './version-order.js';
import type { UpdateManifest } from '../fleet/contract/manifest-schema.js';
import { readSmallJson, updateFiles } from './files.js';
import { readUpdateState, writeUpdateState, type UpdateStateFile } from './state-file.js';

export interface UpdateAgentOptions {
  dir: string;
  keyring: Keyring | null;
  running: string;
  caFile: string | null;
  maxDownloadBytes: number;
  /** Queue an `update` event (the payment side writes it to the ledger's event queue). */
  emit(event: UpdateEventFacts): void;
  /** The verified version may be activated at the next idle moment (main thread). */
  ready(version: string, rolloutId: string | null): void;
  /** The status's `update` member changed. */
  statusChanged(): void;
  log: { info(o: object, m: string): void; warn(o: object, m: string): void };
  wallNow(): number;
  monotonicNow(): number;
  /** Test knobs of the download (retry delay, timeouts). */
  download?: Partial<
    Pick<
      DownloadOptions,
      'retryDelayMs' | 'idleTimeoutMs' | 'requestTimeoutMs' | 'progressEveryMs' | 'maxStalledAttempts'
    >
  >;
}

export type OfferOutcome =
  | { ok: true; result: { accepted: true; already?: boolean; replaces?: string } }
  | { ok: false; code: 'BAD_ARGS'; message: string };

/** States after which an offer is over on this machine (a new offer of any newer version is taken). */
const ENDED: ReadonlySet<UpdateState> = new Set(['refused', 'failed', 'rolled-back', 'healthy']);
/** How often a download reports progress as an event. */
const PROGRESS_EVERY_MS = 30_000;

export class UpdateAgent {
  private current: UpdateStateFile | null;
  private abort: AbortController | null = null;

  constructor(private readonly o: UpdateAgentOptions) {
    this.current = readUpdateState(o.dir);
  }

  /** What the retained status says of updates, or null when this machine never heard of one. */
  status(): UpdateStatus | null {
    const c = this.current;
    return c === null ? null : { state: c.state, version: c.version, rolloutId: c.rolloutId, at: c.at };
  }

  /**
   * At start: an update left half-way by the last run goes on (a download resumes, a verified one
   * waits again); one the root side refused to activate is reported failed.
   */
  resume(): void {
    const c = this.current;
    if (c === null || ENDED.has(c.state)) return;
    const files = updateFiles(this.o.dir);
    // What runs first: a refusal found while the offered version already runs is stale (the
    // activation was cut short after the switch, and a root side of an earlier package refused its
    // leftover request at the next start): that release is on trial, not failed (docs/releases.md).
    const order = compareVersions(this.o.running, c.version);
    const refused = readSmallJson(files.activationRefused) as { version?: unknown; reason?: unknown } | null;
    if (refused !== null) {
      removeDurably(files.activationRefused);
      if (refused.version === c.version && order < 0) {
        this.set(
          'failed',
          `the activation was refused: ` +
            `${typeof refused.reason === 'string' ? refused.reason.slice(0, 300) : 'no reason given'}`,
        );
        return;
      }
    }
    // Running the offered version: the trial (or its end) is the root side's and the new agent's,
    // which publish its events; the status follows quietly (refresh()). The agent that asked for
    // the activation left `waiting` (the activation is the main thread's, state.json the worker's).
    if (order >= 0) {
      if (order === 0 && c.state !== 'trial') this.set('trial', null, null, false);
      this.refresh();
      return;
    }
    const back = readSmallJson(files.rolledBack) as { version?: unknown; reason?: unknown } | null;
    if (back !== null && back.version === c.version) {
      this.set('rolled-back', typeof back.reason === 'string' ? back.reason.slice(0, 300) : null, null, false);
      return;
    }
    if (c.state === 'activating') {
      // Asked for and restarted, yet still the old version with no refusal left: the activator did not run (a power
      // cut, a hand start): ask again.
      this.set('waiting', 'the activation did not happen; waiting for an idle moment again');
      this.o.ready(c.version, c.rolloutId);
      return;
    }
    if (c.state === 'verified' || c.state === 'waiting') {
      this.o.ready(c.version, c.rolloutId);
      return;
    }
    this.fetch(c.manifest, c.url, c.rolloutId);
  }

  offer(args: unknown): OfferOutcome {
    const raw = (
      typeof args === 'object' && args !== null ? (args as { manifest?: unknown }).manifest : null
    ) as Record<string, unknown> | null;
    if (typeof raw === 'object' && raw !== null && raw.signature === undefined) {
      // Said as what it is, not as a schema path: the operator offered an unsigned manifest.
      const version = typeof raw.version === 'string' ? raw.version.slice(0, 64) : 'unknown';
      const rolloutId =
        typeof (args as { rolloutId?: unknown }).rolloutId === 'string'
          ? (args as { rolloutId: string }).rolloutId.slice(0, 64)
          : null;
      const detail = 'UPDATE_SIGNATURE_REFUSED: the update manifest is unsigned';
      this.o.emit({ version, state: 'refused', rolloutId, progress: null, detail });
      return { ok: false, code: 'BAD_ARGS', message: `update refused: ${detail}` };
    }
    const parsed = UpdateOfferArgs.safeParse(args);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return {
        ok: false,
        code: 'BAD_ARGS',
        message: `args.${issue?.path.map(String).join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
      };
    }
    const { manifest: offered, url, rolloutId = null } = parsed.data;
    const version = offered.version;
    let manifest: UpdateManifest;
    try {
      checkDownloadUrl(url);
      manifest = verifyManifest({
        manifest: offered,
        keyring: this.o.keyring,
        nowMs: this.o.wallNow(),
        running: this.o.running,
        arch: machineArch(),
      });
    } catch (err) {
      if (!isQrvendError(err)) throw err;
      const detail = `${err.code}: ${err.message}`;
      this.o.emit({ version: version.slice(0, 64), state: 'refused', rolloutId, progress: null, detail });
      return { ok: false, code: 'BAD_ARGS', message: `update refused: ${detail}` };
    }
    const c = this.current;
    let replaces: string | undefined;
    if (c !== null && !ENDED.has(c.state) && compareVersions(this.o.running, c.version) < 0) {
      const order = compareVersions(version, c.version);
      if (order === 0) return { ok: true, result: { accepted: true, already: true } };
      if (order < 0) {
        const detail =
          `UPDATE_DOWNGRADE: an update to ${c.version} is ` + `under way here (${c.state}); ${version} is older`;
        this.o.emit({ version, state: 'refused', rolloutId, progress: null, detail });
        return { ok: false, code: 'BAD_ARGS', message: `update refused: ${detail}` };
      }
      replaces = c.version;
      this.abort?.abort();
    }
    this.o.log.info(
      { event: 'update.offer', version, rolloutId, replaces: replaces ?? null },
      `update ${version} offered${replaces ? `, replacing ${replaces}` : ''}`,
    );
    this.current = {
      v: 1,
      version,
      rolloutId,
      url,
      manifest,
      state: 'offered',
      fetched: 0,
      detail: null,
      at: new Date(this.o.wallNow()).toISOString(),
    };
    this.set('offered', replaces ? `replaces the update to ${replaces}` : null);
    this.pruneDownloads(version);
    this.fetch(manifest, url, rolloutId);
    return { ok: true, result: { accepted: true, ...(replaces ? { replaces } : {}) } };
  }

  /** The trial's end, as the files of the root side and the trial say it (called now and then): the status follows. */
  refresh(): void {
    const c = this.current;
    if (c === null || c.state !== 'trial') return;
    const healthy = readSmallJson(updateFiles(this.o.dir).healthy) as { version?: unknown } | null;
    if (healthy !== null && healthy.version === c.version) this.set('healthy', null, null, false);
  }

  /** Stops a download under way (the worker is stopping); the part stays for the next start. */
  stop(): void {
    this.abort?.abort();
  }

  /**
   * Moves to `state`: durably in state.json, in the status, and (unless
   * `announce` is false: another part publishes it) as an event.
   */
  private set(
    state: UpdateState,
    detail: string | null,
    progress: { bytes: number; size: number } | null = null,
    announce = true,
  ): void {
    const c = this.current;
    if (c === null) return;
    this.current = { ...c, state, detail, at: new Date(this.o.wallNow()).toISOString() };
    try {
      writeUpdateState(this.o.dir, this.current);
    } catch (err) {
      this.o.log.warn({ err: (err as Error).message, dir: this.o.dir }, 'update state could not be written');
    }
    if (announce) this.o.emit({ version: c.version, state, rolloutId: c.rolloutId, progress, detail });
    this.o.statusChanged();
  }

  private persistFetched(total: number): void {
    const c = this.current;
    if (c === null) return;
    this.current = { ...c, fetched: total };
    writeUpdateState(this.o.dir, this.current);
  }

  /** Removes what earlier offers left in downloads/ (one update's files at a time on a small card). */
  private pruneDownloads(keep: string): void {
    const downloads = updateFiles(this.o.dir).downloads;
    try {
      for (const name of readdirSync(downloads))
        if (name !== keep) rmSync(join(downloads, name), { recursive: true, force: true });
    } catch {
      // no downloads yet
    }
  }

  private fetch(manifest: UpdateManifest, url: string, rolloutId: string | null): void {
    const controller = new AbortController();
    this.abort = controller;
    const dir = updateFiles(this.o.dir).download(manifest.version);
    const mine = () => this.abort === controller && this.current?.version === manifest.version;
    void (async () => {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o750 });
        writeFileAtomic(join(dir, 'manifest.json'), JSON.stringify(manifest), 0o640);
        this.set('downloading', null, { bytes: 0, size: manifest.size });
        await downloadArtifact({
          url,
          manifest,
          dir,
          caFile: this.o.caFile,
          maxBytes: this.o.maxDownloadBytes,
          fetchedBefore: this.current?.fetched ?? 0,
          onFetched: (total) => mine() && this.persistFetched(total),
          onProgress: (bytes, size) =>
            mine() &&
            bytes < size &&
            this.o.emit({
              version: manifest.version,
              state: 'downloading',
              rolloutId,
              progress: { bytes, size },
              detail: null,
            }),
          progressEveryMs: PROGRESS_EVERY_MS,
          monotonicNow: this.o.monotonicNow,
          signal: controller.signal,
          ...this.o.download,
        });
        if (!mine()) return;
        this.set('verified', null, { bytes: manifest.size, size: manifest.size });
        this.set('waiting', 'waiting for the machine to be idle');
        this.o.ready(manifest.version, rolloutId);
      } catch (err) {
        if (!mine()) return;
        // the worker stops: the state stays `downloading`, resumed at the next start
        if (controller.signal.aborted) return;
        const detail = isQrvendError(err)
          ? `${err.code}: ${err.message}`
          : `UPDATE_DOWNLOAD_FAILED: ${(err as Error).message}`;
        this.o.log.warn(
          { event: 'update.failed', version: manifest.version, detail },
          `update ${manifest.version} failed`,
        );
        this.set('failed', detail.slice(0, 512));
      }
    })();
  }
}
