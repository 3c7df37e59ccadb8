/**
 * The operator's side of the catalog document (docs/fleet.md, "The catalog document";
 * src/fleet/contract/catalog.ts): `qrvend fleet catalog sign` signs the documents the console
 * prepared (one per machine), `push` publishes each retained on its machine's `catalog` topic, and
 * `status` reads back, per machine, what the broker holds and what the machine runs, waits to
 * apply or refused.
 */
import type { KeyObject } from 'node:crypto';
import type { MqttClient } from 'mqtt';
import { z } from 'zod';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { MAX_DOCUMENT_LIFETIME_MS, signStatement } from '../../trust/signed.js';
import {
  CATALOG_STATEMENT_KIND,
  MAX_CATALOG_BYTES,
  SignedCatalog,
  UnsignedCatalog,
  catalogStatement,
  type CatalogStatus,
} from '../contract/catalog.js';
import { StatusMessage } from '../contract/messages.js';
import { machineTopics, parseTopic, TOPIC_LEVEL } from '../contract/topics.js';

/** A file of documents: one, or `{ "documents": [...] }` (what the console exports). */
const DocumentsFile = z.union([z.strictObject({ documents: z.array(z.unknown()).min(1).max(100_000) }), z.unknown()]);

export const DEFAULT_CATALOG_LIFETIME_MS = 365 * 24 * 3600_000;

function usage(message: string): QrvendError {
  return new QrvendError(ErrorCodes.CLI_USAGE, message);
}

function listOf(value: unknown): unknown[] {
  const parsed = DocumentsFile.parse(value);
  return typeof parsed === 'object' && parsed !== null && 'documents' in parsed
    ? (parsed as { documents: unknown[] }).documents
    : [value];
}

function issue(error: z.ZodError): string {
  const first = error.issues[0];
  return `${first?.path.join('.') || '(root)'}: ${first?.message ?? 'invalid'}`;
}

/** Signs every document of `value` (a signature already in one is replaced); refuses the file whole on any problem. */
export function signCatalogs(
  value: unknown,
  o: { keyId: string; key: KeyObject; nowMs: number; lifetimeMs?: number },
): SignedCatalog[] {
  const documents = listOf(value);
  const unsigned = documents.map((doc, i) => {
    const bare = typeof doc === 'object' && doc !== null ? { ...(doc as Record<string, unknown>) } : doc;
    if (typeof bare === 'object' && bare !== null) delete (bare as Record<string, unknown>).signature;
    const parsed = UnsignedCatalog.safeParse(bare);
    if (!parsed.success) throw usage(`document ${i + 1}: ${issue(parsed.error)}`);
    if (!TOPIC_LEVEL.test(parsed.data.machineId)) throw usage(`document ${i + 1}: machineId is not a topic level`);
    return parsed.data;
  });
  return unsigned.map((doc) => {
    const signature = signStatement(CATALOG_STATEMENT_KIND, catalogStatement(doc), {
      keyId: o.keyId,
      key: o.key,
      nowMs: o.nowMs,
      lifetimeMs: o.lifetimeMs ?? DEFAULT_CATALOG_LIFETIME_MS,
      maxLifetimeMs: MAX_DOCUMENT_LIFETIME_MS,
      format: 2,
    });
    const signed = { ...doc, signature };
    if (Buffer.byteLength(JSON.stringify(signed)) > MAX_CATALOG_BYTES) {
      throw usage(`the document for ${doc.machineId} is over ${MAX_CATALOG_BYTES} bytes once signed`);
    }
    return signed;
  });
}

/** The signed documents of a file, each checked for shape (the machine checks the signature). */
export function signedCatalogsOf(value: unknown): SignedCatalog[] {
  return listOf(value).map((doc, i) => {
    const parsed = SignedCatalog.safeParse(doc);
    if (!parsed.success) throw usage(`document ${i + 1}: ${issue(parsed.error)}`);
    if (parsed.data.signature === undefined) throw usage(`document ${i + 1}: not signed (qrvend fleet catalog sign)`);
    if (!TOPIC_LEVEL.test(parsed.data.machineId)) throw usage(`document ${i + 1}: machineId is not a topic level`);
    return parsed.data;
  });
}

/** Publishes each document retained (QoS 1) on its machine's `catalog` topic; resolves when the broker took all. */
export async function pushCatalogs(client: MqttClient, prefix: string, documents: SignedCatalog[]): Promise<void> {
  for (const doc of documents) {
    await client.publishAsync(machineTopics(prefix, doc.machineId).catalog, JSON.stringify(doc), {
      qos: 1,
      retain: true,
    });
  }
}

export interface CatalogRow {
  machineId: string;
  /** The version the broker holds for the machine (retained), or null. */
  pushed: number | null;
  online: boolean | null;
  catalog: CatalogStatus | null;
}

/** Reads the retained catalogs and statuses of the fleet (or of `machines`), until settled. */
export async function collectCatalogStatus(
  client: MqttClient,
  o: { prefix: string; settleMs: number; maxWaitMs: number; machines?: string[] },
): Promise<CatalogRow[]> {
  const rows = new Map<string, CatalogRow>();
  const row = (id: string) => {
    let r = rows.get(id);
    if (r === undefined) rows.set(id, (r = { machineId: id, pushed: null, online: null, catalog: null }));
    return r;
  };
  let last = Date.now();
  client.on('message', (topic, payload) => {
    const parsed = parseTopic(o.prefix, topic);
    if (parsed === null || payload.byteLength > MAX_CATALOG_BYTES * 2) return;
    if (o.machines !== undefined && !o.machines.includes(parsed.machineId)) return;
    last = Date.now();
    let json: unknown;
    try {
      json = JSON.parse(payload.toString('utf8'));
    } catch {
      return;
    }
    if (parsed.kind === 'catalog') {
      const version = (json as { version?: unknown } | null)?.version;
      row(parsed.machineId).pushed = typeof version === 'number' ? version : null;
    } else if (parsed.kind === 'status') {
      const status = StatusMessage.safeParse(json);
      if (!status.success) return;
      const r = row(parsed.machineId);
      r.online = status.data.online;
      if (status.data.online) r.catalog = status.data.catalog ?? null;
    }
  });
  await client.subscribeAsync({ [`${o.prefix}/+/catalog`]: { qos: 1 }, [`${o.prefix}/+/status`]: { qos: 1 } });
  const started = Date.now();
  while (Date.now() - started < o.maxWaitMs && Date.now() - last < o.settleMs) {
    await new Promise((r) => setTimeout(r, Math.min(50, o.settleMs)));
  }
  return [...rows.values()].sort((a, b) => (a.machineId < b.machineId ? -1 : 1));
}

/** One line per machine: pushed, running, waiting, refused with why. */
export function formatCatalogRows(rows: CatalogRow[]): string {
  const lines = ['machine\tonline\tpushed\trunning\twaiting\trefused'];
  for (const r of rows) {
    const c = r.catalog;
    const refused = c?.refused ? `v${c.refused.version ?? '?'} ${c.refused.reason}: ${c.refused.message}` : '-';
    lines.push(
      [
        r.machineId,
        r.online === null ? '?' : r.online ? 'yes' : 'no',
        r.pushed ?? '-',
        c === null ? '(no report)' : (c.version ?? 'site file'),
        c?.pending ?? '-',
        refused,
      ].join('\t'),
    );
  }
  return `${lines.join('\n')}\n`;
}
