/**
 * API tokens (docs/console.md "The API"): made by an admin, read-only, shown once, kept as their
 * SHA-256 only, revocable; and the per-token request count of the API's rate limit, kept in the
 * database so every instance counts against the same limit.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { ConsoleDatabase } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

export const TOKEN_PREFIX = 'qrv_';

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** Makes a token; the returned text is the only time it exists outside the caller. */
export async function createToken(db: Db, name: string, by: string, nowIso: string): Promise<string> {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  await db
    .insertInto('api_tokens')
    .values({
      name: name.slice(0, 100),
      prefix: token.slice(0, 10),
      token_hash: hashOf(token),
      created_by: by,
      created_at: nowIso,
      last_used_at: null,
      revoked_at: null,
    })
    .execute();
  return token;
}

export async function listTokens(db: Db) {
  const rows = await db
    .selectFrom('api_tokens')
    .select(['id', 'name', 'prefix', 'created_by', 'created_at', 'last_used_at', 'revoked_at'])
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

export async function revokeToken(db: Db, id: number, nowIso: string): Promise<void> {
  await db
    .updateTable('api_tokens')
    .set({ revoked_at: nowIso })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();
}

/** The token's id when it is one of ours and not revoked; its last use noted (at most once a minute). */
export async function tokenId(db: Db, token: string, nowMs: number): Promise<number | null> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 100) return null;
  const row = await db
    .selectFrom('api_tokens')
    .select(['id', 'last_used_at'])
    .where('token_hash', '=', hashOf(token))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (row === undefined) return null;
  if (row.last_used_at === null || Date.parse(row.last_used_at) < nowMs - 60_000) {
    await db
      .updateTable('api_tokens')
      .set({ last_used_at: new Date(nowMs).toISOString() })
      .where('id', '=', row.id)
      .execute();
  }
  return Number(row.id);
}

/**
 * Counts one request of `key` in its window (one atomic upsert): the count so far in the window
 * and the milliseconds left of it.
 */
export async function countRequest(db: Db, key: string, windowMs: number, nowMs: number) {
  const expired = sql<boolean>`api_rate.window_start_ms + ${windowMs} <= ${nowMs}`;
  const row = await db
    .insertInto('api_rate')
    .values({ key, count: 1, window_start_ms: nowMs })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: sql`case when ${expired} then 1 else api_rate.count + 1 end`,
        window_start_ms: sql`case when ${expired} then ${nowMs} else api_rate.window_start_ms end`,
      }),
    )
    .returning(['count', 'window_start_ms'])
    .executeTakeFirstOrThrow();
  return { current: Number(row.count), ttl: Math.max(0, Number(row.window_start_ms) + windowMs - nowMs) };
}
