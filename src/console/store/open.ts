/**
 * Opens the console's database: a SQLite file (better-sqlite3, the embedded default) or a
 * PostgreSQL server (`pg`), behind one Kysely query layer, and migrates it to the newest version.
 */
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { migrateToLatest, type Dialect } from './migrations.js';
import type { ConsoleDatabase } from './schema.js';

export interface ConsoleStore {
  db: Kysely<ConsoleDatabase>;
  dialect: Dialect;
  close(): Promise<void>;
}

/** `postgres://` or `postgresql://` selects PostgreSQL; anything else is a SQLite file path. */
export function dialectOf(target: string): Dialect {
  return /^postgres(ql)?:\/\//.test(target) ? 'postgres' : 'sqlite';
}

/** The database as it may be shown: a URL without its password. */
export function storeLabel(target: string): string {
  return target.replace(/\/\/([^/@:]*)(:[^/@]*)?@/, '//$1@');
}

async function openSqlite(path: string): Promise<Kysely<ConsoleDatabase>> {
  const { default: Database } = await import('better-sqlite3');
  const file = new Database(path);
  // WAL: readers (the pages) never wait for the writer (ingest); NORMAL is durable across a
  // process kill, which is what an unacknowledged-until-committed event needs.
  file.pragma('journal_mode = WAL');
  file.pragma('synchronous = NORMAL');
  file.pragma('busy_timeout = 5000');
  return new Kysely<ConsoleDatabase>({ dialect: new SqliteDialect({ database: file }) });
}

interface ErrorSource {
  on(event: 'error', listener: (err: Error) => void): unknown;
}
type PoolEvents = ErrorSource & { on(event: 'connect', listener: (client: ErrorSource) => void): unknown };

/**
 * A server restart (or its fast shutdown) breaks every connection: an idle one makes the pool
 * emit 'error', one held between two queries of a transaction emits 'error' itself. Unheard,
 * either ends the process. Heard, the query in progress fails (the event is not acknowledged,
 * ingest says so), the pool drops the broken connection when it is released, and the next query
 * opens a new one.
 */
export function guardPoolClients(pool: PoolEvents): void {
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
}

async function openPostgres(url: string): Promise<Kysely<ConsoleDatabase>> {
  const { default: pg } = await import('pg');
  // bigint (count, sums of thousandths) and numeric as JS numbers: sums stay below 2^53.
  pg.types.setTypeParser(20, (v: string) => Number(v));
  pg.types.setTypeParser(1700, (v: string) => Number(v));
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 10_000 });
  guardPoolClients(pool);
  return new Kysely<ConsoleDatabase>({ dialect: new PostgresDialect({ pool }) });
}

export async function openStore(target: string): Promise<ConsoleStore> {
  const dialect = dialectOf(target);
  let db: Kysely<ConsoleDatabase>;
  try {
    db = dialect === 'sqlite' ? await openSqlite(target) : await openPostgres(target);
  } catch (err) {
    throw new QrvendError(
      ErrorCodes.CONSOLE_STORE_FAILED,
      `cannot open the console database ${storeLabel(target)}: ${(err as Error).message}`,
      {
        hint: 'check --db: a writable SQLite file path, or postgres://USER@HOST:PORT/DB',
      },
    );
  }
  try {
    await migrateToLatest(db, dialect);
  } catch (err) {
    await db.destroy();
    if (err instanceof QrvendError) throw err;
    throw new QrvendError(
      ErrorCodes.CONSOLE_STORE_FAILED,
      `cannot reach the console database ${storeLabel(target)}: ${(err as Error).message}`,
      {
        hint: 'check that the database server runs and --db names it',
      },
    );
  }
  return { db, dialect, close: () => db.destroy() };
}
