/**
 * Catalog documents prepared by the console (docs/fleet.md, "The catalog document"): each push is
 * the documents prepared at one moment by one account, one per machine at the machine's next
 * version, kept unsigned (the console holds no key: they are signed and published with `qrvend
 * fleet catalog sign|push`, or in the operator's browser). Where each stands comes from the
 * machines' own reports (their retained status's `catalog`, kept by ingest in machines.catalog_status).
 */
import type { Kysely } from 'kysely';
import { CATALOG_REFUSALS, CatalogStatus, type UnsignedCatalog } from '../../fleet/contract/catalog.js';
import { catalogDocument, nextVersion, pushStanding, type PushStanding } from '../route/catalog-state.js';
import { planograms } from './route-queries.js';
import { productList } from './planogram-reads.js';
import type { ConsoleDatabase } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

export function catalogStatusOf(text: string | null | undefined): CatalogStatus | null {
  if (text === null || text === undefined) return null;
  try {
    const parsed = CatalogStatus.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

async function statusesOf(db: Db, machineIds: string[]): Promise<Map<string, CatalogStatus | null>> {
  const out = new Map<string, CatalogStatus | null>();
  for (let i = 0; i < machineIds.length; i += 500) {
    const rows = await db
      .selectFrom('machines')
      .select(['machine_id', 'catalog_status'])
      .where('machine_id', 'in', machineIds.slice(i, i + 500))
      .execute();
    for (const r of rows) out.set(r.machine_id, catalogStatusOf(r.catalog_status));
  }
  return out;
}

function keptRefusal(reason: string | null | undefined, message: string | null | undefined) {
  const r = CATALOG_REFUSALS.find((x) => x === reason);
  return r === undefined ? null : { reason: r, message: message ?? '' };
}

export interface Prepared {
  preparedAt: string;
  documents: UnsignedCatalog[];
  /** Machines left out, with why (no planogram, a document too large). */
  skipped: { machineId: string; why: string }[];
}

/** Prepares the next document of each machine (of those with a planogram) and keeps it as one push. */
export async function prepareCatalogs(db: Db, machineIds: string[], user: string, nowMs: number): Promise<Prepared> {
  const ids = [...new Set(machineIds)].sort();
  const [plans, products, statuses, last] = await Promise.all([
    planograms(db, ids),
    productList(db),
    statusesOf(db, ids),
    db
      .selectFrom('catalog_pushes')
      .select((eb) => ['machine_id', eb.fn.max('version').as('version')])
      .where('machine_id', 'in', ids.length === 0 ? [''] : ids)
      .groupBy('machine_id')
      .execute(),
  ]);
  const productMap = new Map(products.map((p) => [p.code, p]));
  const lastBy = new Map(last.map((l) => [l.machine_id, Number(l.version)]));
  const preparedAt = new Date(nowMs).toISOString();
  const documents: UnsignedCatalog[] = [];
  const skipped: Prepared['skipped'] = [];
  for (const machineId of ids) {
    const selections = plans.filter((p) => p.machineId === machineId);
    if (selections.length === 0) {
      skipped.push({ machineId, why: 'no planogram: apply a template first' });
      continue;
    }
    const version = nextVersion(lastBy.get(machineId) ?? null, statuses.get(machineId) ?? null);
    const doc = catalogDocument(machineId, version, selections, productMap);
    if (doc.ok) documents.push(doc.document);
    else skipped.push({ machineId, why: doc.message });
  }
  if (documents.length > 0)
    await db
      .insertInto('catalog_pushes')
      .values(
        documents.map((d) => ({
          machine_id: d.machineId,
          version: d.version,
          prepared_at: preparedAt,
          prepared_by: user,
          document: JSON.stringify(d),
        })),
      )
      .execute();
  return { preparedAt, documents, skipped };
}

export interface PushSummary {
  preparedAt: string;
  preparedBy: string;
  machines: number;
  counts: Record<PushStanding['state'], number>;
}

export interface MachineCatalog extends PushStanding {
  machineId: string;
  version: number;
  preparedAt: string;
  running: number | null;
  waiting: number | null;
  /** The last document the machine refused (any version, pushed from anywhere), with why. */
  lastRefusal: CatalogStatus['refused'];
}

/** Each machine's document of a push (or each machine's latest), and where it stands. */
export async function catalogMachines(db: Db, preparedAt: string | null, limit = 2000): Promise<MachineCatalog[]> {
  let q = db
    .selectFrom('catalog_pushes')
    .select(['machine_id', 'version', 'prepared_at', 'refused_reason', 'refused_message']);
  if (preparedAt !== null) q = q.where('prepared_at', '=', preparedAt);
  else
    q = q.where(({ eb, selectFrom }) =>
      eb(
        'version',
        '=',
        selectFrom('catalog_pushes as l')
          .select((x) => x.fn.max('l.version').as('v'))
          .whereRef('l.machine_id', '=', 'catalog_pushes.machine_id'),
      ),
    );
  const rows = await q.orderBy('machine_id').limit(limit).execute();
  const statuses = await statusesOf(
    db,
    rows.map((r) => r.machine_id),
  );
  return rows.map((r) => {
    const status = statuses.get(r.machine_id) ?? null;
    return {
      machineId: r.machine_id,
      version: Number(r.version),
      preparedAt: r.prepared_at,
      running: status?.version ?? null,
      waiting: status?.pending ?? null,
      lastRefusal: status?.refused ?? null,
      ...pushStanding(Number(r.version), status, keptRefusal(r.refused_reason, r.refused_message)),
    };
  });
}

/** The pushes, newest first, each with where its documents stand. */
export async function catalogPushes(db: Db, limit = 50): Promise<PushSummary[]> {
  const pushes = await db
    .selectFrom('catalog_pushes')
    .select((eb) => ['prepared_at', 'prepared_by', eb.fn.countAll<number>().as('n')])
    .groupBy(['prepared_at', 'prepared_by'])
    .orderBy('prepared_at', 'desc')
    .limit(limit)
    .execute();
  const out: PushSummary[] = [];
  for (const p of pushes) {
    const counts = { intended: 0, delivered: 0, applied: 0, superseded: 0, refused: 0 };
    for (const m of await catalogMachines(db, p.prepared_at)) counts[m.state]++;
    out.push({ preparedAt: p.prepared_at, preparedBy: p.prepared_by, machines: Number(p.n), counts });
  }
  return out;
}

/** The unsigned documents of a push, as `qrvend fleet catalog sign` reads them. */
export async function pushDocuments(db: Db, preparedAt: string): Promise<UnsignedCatalog[]> {
  const rows = await db
    .selectFrom('catalog_pushes')
    .select('document')
    .where('prepared_at', '=', preparedAt)
    .orderBy('machine_id')
    .execute();
  return rows.map((r) => JSON.parse(r.document) as UnsignedCatalog);
}
