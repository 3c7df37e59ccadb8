/**
 * The fleet worker's end of the catalog (docs/fleet.md, "The catalog document"): it takes the
 * retained document on the machine's own `catalog` topic, checks it (catalog-check.ts), keeps an
 * accepted one durably (catalog-store.ts) and hands it to the payment worker, which applies it
 * between sessions and says so (`fleet.catalog.applied`). What it runs, what waits and what it
 * refused last go into the retained status. A retained document comes again at every reconnect:
 * the one kept is recognised and changes nothing.
 */
import type { Logger } from '../../core/log.js';
import type { Keyring } from '../../trust/keys.js';
import type { FleetToPayment } from '../../ipc/messages.js';
import type { CatalogRefusal, CatalogStatus } from '../contract/catalog.js';
import { catalogDigest, checkCatalog, readCatalogPayload, type BaseCatalog } from './catalog-check.js';
import { catalogFloor, keepCatalog, readKeptCatalog } from './catalog-store.js';
import type { VersionFloor } from '../../trust/version-floor.js';
import { CommandRateBound } from './rate-bound.js';

/** Each document costs an Ed25519 check: a flood on the topic is dropped past this (only operators may write it). */
const CHECKS_PER_SECOND = 2;
const CHECKS_BURST = 10;

export interface CatalogReceiverOptions {
  file: string;
  keyring: Keyring | null;
  machineId: string;
  base: BaseCatalog;
  log: Logger;
  wallNow(): number;
  monotonicNow(): number;
  toPayment(message: FleetToPayment): void;
  /** The status changed: publish it. */
  changed(): void;
}

export class CatalogReceiver {
  private readonly state: CatalogStatus = { version: null, pending: null, refused: null };
  private readonly floor: VersionFloor;
  private readonly bound: CommandRateBound;

  constructor(private readonly o: CatalogReceiverOptions) {
    this.bound = new CommandRateBound(CHECKS_PER_SECOND, CHECKS_BURST, o.monotonicNow());
    this.floor = catalogFloor(o.file);
    const read = readKeptCatalog(o.file, o);
    if (read.kind === 'unusable') {
      // The payment worker found the same and runs on the site file's catalog; the status says why.
      this.refuse(read.version, 'bad-signature', `the kept document ${o.file} is not used: ${read.message}`);
    }
  }

  status(): CatalogStatus {
    return { ...this.state };
  }

  /** A message on the machine's `catalog` topic. */
  received(payload: Uint8Array): void {
    if (payload.byteLength === 0) return; // the operator cleared the retained document: nothing to apply
    if (!this.bound.take(this.o.monotonicNow())) return;
    const read = readCatalogPayload(payload);
    if (!read.ok) return this.refuse(null, 'malformed', read.message);
    let current: { version: number; digest: string | undefined } | null;
    try {
      const record = this.floor.read();
      current = record === null ? null : { version: record.version, digest: record.digest };
    } catch (err) {
      // Fail closed: without the record, older cannot be told from newer (src/trust/version-floor.ts).
      return this.refuse(null, 'older', (err as Error).message);
    }
    const checked = checkCatalog(read.value, {
      keyring: this.o.keyring,
      machineId: this.o.machineId,
      current,
      base: this.o.base,
      nowMs: this.o.wallNow(),
    });
    if (!checked.ok) return this.refuse(checked.version, checked.reason, checked.message);
    if (checked.same) return;
    const { doc } = checked;
    try {
      this.floor.admit(doc.version, catalogDigest(doc), this.o.wallNow());
    } catch (err) {
      return this.refuse(doc.version, 'older', (err as Error).message);
    }
    try {
      keepCatalog(this.o.file, { acceptedAtMs: this.o.wallNow(), document: doc });
    } catch (err) {
      // Applied all the same; after a restart the machine runs on the version kept before.
      this.o.log.error(
        { event: 'fleet.catalog.unkept', err: (err as Error).message, file: this.o.file, version: doc.version },
        'the catalog document could not be written to disk: it is applied, but not kept across a restart',
      );
    }
    this.state.pending = doc.version;
    this.o.log.info(
      {
        event: 'fleet.catalog.accepted',
        version: doc.version,
        keyId: checked.keyId,
        items: Object.keys(doc.items).length,
      },
      `catalog version ${doc.version} accepted; applied between sessions`,
    );
    this.o.toPayment({ type: 'fleet.catalog', version: doc.version, catalog: checked.catalog });
    this.o.changed();
  }

  /** The payment worker applied `version` (or, with null, runs on the site file's catalog). */
  applied(version: number | null): void {
    this.state.version = version;
    if (version !== null && this.state.pending !== null && this.state.pending <= version) this.state.pending = null;
    this.o.changed();
  }

  private refuse(version: number | null, reason: CatalogRefusal, message: string): void {
    const at = new Date(this.o.wallNow()).toISOString();
    this.state.refused = { version, reason, message: message.slice(0, 512), at };
    this.o.log.warn(
      { event: 'fleet.catalog.refused', code: 'CATALOG_REFUSED', version, reason },
      `catalog document refused (${reason}): ${message.slice(0, 512)}`,
    );
    this.o.changed();
  }
}
