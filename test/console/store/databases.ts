/**
 * The databases a console test runs against: a SQLite file always, and a PostgreSQL server of the
 * test's own (test/console/support/postgres.ts) where Debian's postgresql is installed. Where it is
 * not, the PostgreSQL cases skip and say why.
 */
import type { TestContext } from 'node:test';
import { sql } from 'kysely';
import { postgresBinDir, startPostgres, type TestPostgres } from '../support/postgres.js';
import { openTestStore, type TestStore } from '../support/store.js';

export type DatabaseKind = 'sqlite' | 'postgres';
export const DATABASES: DatabaseKind[] = ['sqlite', 'postgres'];

let server: TestPostgres | null = null;

/** A fresh store of that kind, or null after marking the test skipped (no PostgreSQL here). */
export async function openDatabase(t: TestContext, kind: DatabaseKind): Promise<TestStore | null> {
  if (kind === 'sqlite') return openTestStore('sqlite');
  if (postgresBinDir() === null) {
    t.skip('PostgreSQL is not installed (apt-get install postgresql): only SQLite was tested');
    return null;
  }
  server ??= await startPostgres();
  process.env.QRVEND_CONSOLE_TEST_PG = server.server;
  return openTestStore('env');
}

/** Stops the PostgreSQL server started for this file, if any (call from after()). */
export function stopDatabases(): void {
  server?.stop();
  server = null;
}

/**
 * A rule in the database that refuses one eventId, as a check constraint would (a data error:
 * SQLite's constraint, PostgreSQL's check_violation), the way a value out of range is refused.
 */
export async function refuseEventId(store: TestStore, eventId: string): Promise<void> {
  if (store.dialect === 'sqlite') {
    await sql`create trigger refuse_one before insert on events when new.event_id = ${sql.lit(eventId)}
      begin select raise(abort, 'refused by the test'); end`.execute(store.db);
    return;
  }
  await sql`create function refuse_one() returns trigger language plpgsql as $$
    begin if new.event_id = ${sql.lit(eventId)} then
      raise exception using errcode = 'check_violation', message = 'refused by the test';
    end if; return new; end \
$$`.execute(store.db);
  await sql`create trigger refuse_one before insert on events for each row execute function refuse_one()`.execute(
    store.db,
  );
}
