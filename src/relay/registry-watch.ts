/**
 * The registry the relay routes by, kept current: read at start (a registry that cannot be used
 * stops the relay, exit 78), re-read when the file changes (polled: an atomic rename by the
 * operator's deployment replaces the inode, which fs.watch would lose) and on SIGHUP (cli.ts).
 * A new file that fails (unreadable, bad signature, older than the newest verified) leaves the
 * loaded registry in force, is logged at error and counted in `reloadFailures` (/healthz).
 *
 * "Older" is judged against the newest registry this relay ever verified, kept on disk in
 * `relay.stateDir` (src/trust/version-floor.ts, docs/security.md "Versions kept across restarts"),
 * not only against the one in memory: a registry file put back while the relay was down (a
 * backup restored, or anyone who can write it) would otherwise be taken at the next start, with
 * the machine keys the newer one had removed. The record is written before a registry is used;
 * `qrvend relay registry step-back` lowers it on purpose (registry-cli.ts).
 */
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import { ErrorCodes, QrvendError, isQrvendError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { loadKeyring, TrustFileError, VersionFloor } from '../trust/index.js';
import { loadRegistry, RegistryError, type Registry } from './registry.js';

const POLL_MS = 2_000;

/** The record's name in relay.stateDir: `registry.version.json`. */
export const REGISTRY_DOCUMENT = 'registry';
export const STEP_BACK_COMMAND = 'qrvend relay registry step-back --config <the relay configuration>';

/** The relay's record of the newest registry it verified (the version is the signature's issue time). */
export function registryFloor(stateDir: string): VersionFloor {
  return new VersionFloor({
    dir: stateDir,
    document: REGISTRY_DOCUMENT,
    describe: (issuedAt) => `signed at ${new Date(issuedAt).toISOString()}`,
    stepBackHint: `${STEP_BACK_COMMAND}, then systemctl reload qrvend-relay (docs/relay.md)`,
  });
}

export interface RegistryWatchOptions {
  file: string;
  trustFile: string;
  /** relay.stateDir: where the newest verified registry's version is kept. */
  stateDir: string;
  log: Logger;
  now?: () => number;
}

export interface RegistryState {
  machines: number;
  keyId: string;
  issuedAt: string;
  expiresAt: string;
  /** The loaded registry's validity ended: it is still used (an outage is worse), and raised. */
  expired: boolean;
  /** Machines listed without machineKeys: nothing they say is believed, their Starts get 30. */
  withoutKey: number;
  reloads: number;
  reloadFailures: number;
  lastError: string | null;
}

export class RegistryWatch {
  private current: Registry;
  private reloads = 0;
  private reloadFailures = 0;
  private lastError: string | null = null;
  private listener: ((curr: Stats, prev: Stats) => void) | null = null;
  private readonly file: string;
  private readonly trustFile: string;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly floor: VersionFloor;
  /** Called after a new registry took effect (the directory judges the machines' claims again). */
  onChange: (() => void) | null = null;

  constructor(options: RegistryWatchOptions) {
    const { file, trustFile, log } = options;
    this.file = file;
    this.trustFile = trustFile;
    this.log = log;
    this.now = options.now ?? Date.now;
    this.floor = registryFloor(options.stateDir);
    try {
      this.current = this.read();
    } catch (err) {
      // Older than the newest verified, or no record to tell: said as such (exit 78 either way).
      if (isQrvendError(err)) throw err;
      throw new QrvendError(
        ErrorCodes.CONFIG_INVALID,
        `the relay's registry cannot be used: ${(err as Error).message}`,
        {
          hint:
            'check relay.registryFile and relay.trustFile (a key with the scope registry); sign the registry ' +
            'with `qrvend relay registry sign` (docs/relay.md)',
          details: { registryFile: file, trustFile },
        },
      );
    }
    log.info(
      {
        registryFile: file,
        machines: this.current.machines,
        keyId: this.current.keyId,
        expiresAt: new Date(this.current.expiresAt).toISOString(),
      },
      'registry of machines loaded',
    );
    this.warnWithoutKey();
  }

  /** Machines with no key cannot be believed: said at each load, so an operator adds the keys. */
  private warnWithoutKey(): void {
    const n = this.current.withoutKey;
    if (n === 0) return;
    this.log.warn(
      { withoutKey: n, event: 'relay.registry.keyless' },
      `${n} machines of the registry have no machineKeys: their Starts are answered 30 until their keys are added ` +
        `(qrvend fleet keygen --machine, docs/relay.md)`,
    );
  }

  get registry(): Registry {
    return this.current;
  }

  /**
   * Reads and verifies the file, then holds it to the newest registry verified here (on disk, so
   * across restarts) and records it as the newest before it is used.
   */
  private read(): Registry {
    // The trust file is read each time too: rotating the registry key is adding a key and re-signing.
    const next = loadRegistry(this.file, loadKeyring(this.trustFile), this.now());
    this.floor.admit(next.issuedAt, undefined, this.now());
    return next;
  }

  /** Re-reads the file; keeps the loaded registry when the new one cannot be used. Returns whether it was taken. */
  reload(why: string): boolean {
    try {
      const next = this.read();
      this.current = next;
      this.reloads += 1;
      this.lastError = null;
      this.log.info(
        { why, machines: next.machines, keyId: next.keyId, expiresAt: new Date(next.expiresAt).toISOString() },
        'registry of machines re-read',
      );
      this.warnWithoutKey();
      // Every registry read anew is judged again, whatever it looks like from outside (the same
      // size, a key id given to another key: directory.ts compares the keys themselves).
      this.onChange?.();
      return true;
    } catch (err) {
      const known = err instanceof RegistryError || err instanceof TrustFileError || isQrvendError(err);
      const message = known ? (err as Error).message : String(err);
      this.reloadFailures += 1;
      this.lastError = message.slice(0, 300);
      this.log.error(
        { why, err: this.lastError },
        'registry of machines not re-read: the one loaded before stays in force',
      );
      return false;
    }
  }

  /** Polls the file for changes (size, mtime, inode). */
  watch(): void {
    if (this.listener !== null) return;
    this.listener = (curr: Stats, prev: Stats) => {
      if (curr.mtimeMs !== prev.mtimeMs || curr.ino !== prev.ino || curr.size !== prev.size)
        this.reload('the file changed');
    };
    watchFile(this.file, { interval: POLL_MS, persistent: false }, this.listener);
  }

  stop(): void {
    if (this.listener !== null) unwatchFile(this.file, this.listener);
    this.listener = null;
  }

  state(): RegistryState {
    const r = this.current;
    return {
      machines: r.machines,
      keyId: r.keyId,
      issuedAt: new Date(r.issuedAt).toISOString(),
      expiresAt: new Date(r.expiresAt).toISOString(),
      expired: this.now() > r.expiresAt,
      withoutKey: r.withoutKey,
      reloads: this.reloads,
      reloadFailures: this.reloadFailures,
      lastError: this.lastError,
    };
  }
}
