/**
 * A console store for a test: a real SQLite file in a temporary directory, or, when
 * QRVEND_CONSOLE_TEST_PG names a PostgreSQL server (npm run console-test sets it), a fresh
 * database on it. Closing removes both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openStore, type ConsoleStore } from '../../../src/console/store/open.js';

export interface TestStore extends ConsoleStore {
  target: string;
  remove(): Promise<void>;
}

async function postgresDatabase(server: string): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const name = `console_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: `${server}/postgres` });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  return {
    url: `${server}/${name}`,
    drop: async () => {
      const c = new pg.Client({ connectionString: `${server}/postgres` });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export async function openTestStore(kind: 'sqlite' | 'env' = 'env'): Promise<TestStore> {
  const server = process.env.QRVEND_CONSOLE_TEST_PG;
  if (kind === 'env' && server !== undefined && server !== '') {
    const database = await postgresDatabase(server);
    const store = await openStore(database.url);
    return {
      ...store,
      target: database.url,
      remove: async () => {
        await store.close();
        await database.drop();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-console-'));
  const target = join(dir, 'console.sqlite');
  const store = await openStore(target);
  return {
    ...store,
    target,
    remove: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
