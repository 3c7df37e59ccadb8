/**
 * Applies the fleet's catalog document in the payment worker (docs/fleet.md, "The catalog
 * document"), never in the middle of a sale. The payment worker is where a sale begins (a Start
 * is accepted here; a vend request outside a session reaches the flows here before anything is
 * paid), so the check "nothing running" and the switch happen in one synchronous step of this
 * thread: no session, no Dynamic QR payment, the reader not in a session or a vend. Then, in
 * order: the request builders (Product items, AgeLimitation) and the static QR age limit here, the
 * display's product names (through the same port as its screens), the machine loop's age-denied
 * items (through the same port as the next session.begin), and the fleet worker is told.
 *
 * At start, the document kept on disk is checked again and applied before the flows take anything.
 */
import type { QrvendConfig } from '../config/schema.js';
import type { Logger } from '../core/log.js';
import { highestAgeLimit } from '../gateway/envelope.js';
import { ageDeniedItems } from '../mdb/reader/index.js';
import type { CatalogItemFacts, PaymentToMain, ToDisplay } from '../ipc/messages.js';
import { loadTrust } from '../fleet/machine-link/command-server.js';
import { catalogFile, readKeptCatalog } from '../fleet/machine-link/catalog-store.js';

export type Catalog = QrvendConfig['catalog'];

const RETRY_MS = 1_000;

export interface CatalogSwitchOptions {
  config: QrvendConfig;
  machineId: string;
  log: Logger;
  /** What is running that a switch must wait for (null: nothing). Unset until the flows are up. */
  busy(): string | null;
  /** Rebuild what the payment side derives from the catalog (builders, the static age limit). */
  use(catalog: Catalog, staticAgeLimit: number | null): void;
  toMain(message: PaymentToMain): void;
  toDisplay(message: ToDisplay): void;
  /** Tell the fleet worker which version runs now. */
  applied(version: number | null): void;
}

export class CatalogSwitch {
  private pending: { version: number; catalog: Catalog } | null = null;
  private version: number | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly o: CatalogSwitchOptions) {}

  /** The version the machine sells by (null: the site file's catalog). */
  get running(): number | null {
    return this.version;
  }

  /** At start, before the flows: the kept document, checked again, applied at once (nothing runs yet). */
  startUp(): void {
    const { config, log, machineId } = this.o;
    if (config.fleet.url === null) return;
    const file = catalogFile(config);
    const read = readKeptCatalog(file, { keyring: loadTrust(config.fleet).keyring, machineId, base: config.catalog });
    if (read.kind === 'absent') return;
    if (read.kind === 'unusable') {
      log.warn(
        { event: 'fleet.catalog.unusable', code: 'CATALOG_REFUSED', file, version: read.version },
        `the kept catalog document is not used (${read.message}): the site file's catalog applies`,
      );
      return;
    }
    this.switchTo(read.kept.document.version, read.checked.catalog);
  }

  /** A document the fleet worker accepted: applied now if nothing runs, else at the next idle moment. */
  offer(version: number, catalog: Record<string, CatalogItemFacts>): void {
    if (this.version !== null && version <= this.version) return;
    this.pending = { version, catalog: catalog as Catalog };
    const busy = this.o.busy();
    if (busy !== null)
      this.o.log.info({ event: 'fleet.catalog.waiting', version, busy }, `catalog version ${version} waits: ${busy}`);
    this.tryNow();
  }

  /** Tries the pending switch (the flows call it when a sale ends; a timer retries meanwhile). */
  tryNow(): void {
    if (this.pending === null) return;
    const busy = this.o.busy();
    if (busy !== null) {
      this.timer ??= setTimeout(() => {
        this.timer = null;
        this.tryNow();
      }, RETRY_MS);
      this.timer.unref();
      return;
    }
    const { version, catalog } = this.pending;
    this.pending = null;
    this.switchTo(version, catalog);
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private switchTo(version: number, catalog: Catalog): void {
    const { config } = this.o;
    this.o.use(catalog, config.staticQr.verifyAge ? highestAgeLimit({ catalog }) : null);
    this.o.toDisplay({ type: 'catalog', catalog });
    this.o.toMain({ type: 'catalog.set', ageDeniedItems: ageDeniedItems(config.staticQr.verifyAge, catalog) });
    this.version = version;
    this.o.applied(version);
    this.o.log.info(
      { event: 'fleet.catalog.applied', version, items: Object.keys(catalog).length },
      `catalog version ${version} applied between sessions`,
    );
  }
}
