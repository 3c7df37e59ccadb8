/**
 * Operator accounts, sessions and login failures, all in the database: any console instance
 * serves any request (stateless instances behind a load balancer, docs/console.md).
 */
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { isTimeZone } from '../time-zone.js';
import type { ConsoleDatabase, UsersTable } from './schema.js';

type Db = Kysely<ConsoleDatabase>;

export const ROLES = ['viewer', 'admin'] as const;
export type Role = (typeof ROLES)[number];
export const USER_NAME = /^[A-Za-z0-9._@-]{1,64}$/;
export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_BYTES = 1024;

/** scrypt, memory-hard: 2^15 x 8 x 128 bytes = 32 MiB per hash. */
const SCRYPT = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_BYTES = 32;

function scrypt(password: Buffer, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(Buffer.from(password, 'utf8'), salt, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const expected = Buffer.from(parts[5] ?? '', 'base64');
  if (Buffer.byteLength(password) > MAX_PASSWORD_BYTES) return false;
  const key = await scrypt(Buffer.from(password, 'utf8'), Buffer.from(parts[4] ?? '', 'base64'), {
    N,
    r,
    p,
    maxmem: SCRYPT.maxmem,
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash to check against when the account does not exist, so the answer takes as long. */
let decoy: Promise<string> | null = null;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}

export function checkNewAccount(name: string, role: string, password: string): asserts role is Role {
  if (!USER_NAME.test(name))
    throw new QrvendError(ErrorCodes.CLI_USAGE, 'an account name is 1-64 letters, digits or ._@-');
  if (!(ROLES as readonly string[]).includes(role))
    throw new QrvendError(ErrorCodes.CLI_USAGE, `a role is one of ${ROLES.join(', ')}`);
  if (password.length < MIN_PASSWORD_LENGTH || Buffer.byteLength(password) > MAX_PASSWORD_BYTES) {
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      `a password has at least ${MIN_PASSWORD_LENGTH} characters (and at most ${MAX_PASSWORD_BYTES} bytes)`,
    );
  }
}

/** An account's time zone as given (blank: the console's); refused when no IANA zone. */
export function checkTimeZone(zone: string | null): string | null {
  const z = (zone ?? '').trim();
  if (z === '') return null;
  if (!isTimeZone(z)) {
    throw new QrvendError(
      ErrorCodes.CLI_USAGE,
      `time zone ${JSON.stringify(z.slice(0, 64))} is not an IANA time zone (such as Europe/Berlin or UTC)`,
    );
  }
  return z;
}

export interface AccountChange {
  /** The token hash of the session that made the change, kept when a user changes their own password. */
  keepSession?: string | null;
  /** The account's time zone (null: the console's); unchanged when undefined. */
  timeZone?: string | null;
}

/**
 * Adds an account, or sets the role and password of an existing one. A new password ends the
 * account's sessions (a stolen cookie dies with the old password), all but `keepSession` (the
 * session that made the change, when a user changes their own).
 */
export async function putUser(
  db: Db,
  name: string,
  role: string,
  password: string,
  change: AccountChange = {},
): Promise<void> {
  checkNewAccount(name, role, password);
  const zone = change.timeZone === undefined ? undefined : checkTimeZone(change.timeZone);
  const row = {
    name,
    role,
    password_hash: await hashPassword(password),
    created_at: new Date().toISOString(),
    time_zone: zone ?? null,
  };
  const keepSession = change.keepSession ?? null;
  await db.transaction().execute(async (tx) => {
    await tx
      .insertInto('users')
      .values(row)
      .onConflict((oc) =>
        oc.column('name').doUpdateSet({
          role: row.role,
          password_hash: row.password_hash,
          ...(zone === undefined ? {} : { time_zone: zone }),
        }),
      )
      .execute();
    let ended = tx.deleteFrom('sessions').where('user_name', '=', name);
    if (keepSession !== null) ended = ended.where('token_hash', '<>', keepSession);
    await ended.execute();
  });
}

/** Sets the role and time zone of an existing account, its password and sessions unchanged. */
export async function changeAccount(db: Db, name: string, role: string, timeZone: string | null): Promise<void> {
  if (!(ROLES as readonly string[]).includes(role))
    throw new QrvendError(ErrorCodes.CLI_USAGE, `a role is one of ${ROLES.join(', ')}`);
  const time_zone = checkTimeZone(timeZone);
  const r = await db.updateTable('users').set({ role, time_zone }).where('name', '=', name).executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) {
    throw new QrvendError(ErrorCodes.CLI_USAGE, `no account ${name}: a new account needs a password`);
  }
}

export async function findUser(db: Db, name: string): Promise<UsersTable | undefined> {
  return db.selectFrom('users').selectAll().where('name', '=', name).executeTakeFirst();
}

export async function listUsers(db: Db): Promise<Pick<UsersTable, 'name' | 'role' | 'created_at' | 'time_zone'>[]> {
  return db.selectFrom('users').select(['name', 'role', 'created_at', 'time_zone']).orderBy('name').execute();
}

export async function deleteUser(db: Db, name: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('sessions').where('user_name', '=', name).execute();
    await tx.deleteFrom('users').where('name', '=', name).execute();
  });
}

export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

export async function createSession(
  db: Db,
  userName: string,
  lifetimeMs: number,
): Promise<{ token: string; csrf: string }> {
  const token = randomBytes(32).toString('base64url');
  const csrf = randomBytes(32).toString('base64url');
  await db
    .insertInto('sessions')
    .values({ token_hash: tokenHash(token), user_name: userName, csrf, expires_ms: Date.now() + lifetimeMs })
    .execute();
  return { token, csrf };
}

export interface SessionUser {
  name: string;
  role: Role;
  csrf: string;
  tokenHash: string;
  /** The zone this reader sees times in: the account's own, else the console's. */
  timeZone: string;
}

export async function sessionUser(db: Db, token: string, consoleTimeZone = 'UTC'): Promise<SessionUser | null> {
  const hash = tokenHash(token);
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.name', 'sessions.user_name')
    .select(['users.name', 'users.role', 'users.time_zone', 'sessions.csrf', 'sessions.expires_ms'])
    .where('sessions.token_hash', '=', hash)
    .executeTakeFirst();
  if (row === undefined || Number(row.expires_ms) < Date.now()) return null;
  const role = row.role === 'admin' ? 'admin' : 'viewer';
  return { name: row.name, role, csrf: row.csrf, tokenHash: hash, timeZone: row.time_zone ?? consoleTimeZone };
}

export async function endSession(db: Db, hash: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', hash).execute();
  await db.deleteFrom('sessions').where('expires_ms', '<', Date.now()).execute();
}

/**
 * Reserves one login attempt for each key before any password is checked, all keys in one
 * atomic statement counted in the database (so a burst of concurrent guesses, on any number of
 * console instances sharing it, cannot all pass a check made before they are counted; the keys
 * in one order, so two statements lock them alike). A key's count starts again once its window
 * has passed. Past `limit` on any key the attempt is refused: its reservations are released (a
 * refused attempt checks nothing) and false is returned. An allowed attempt keeps its
 * reservation as a failure unless the password was right (`loginSucceeded`).
 */
export async function reserveLoginAttempt(db: Db, keys: string[], limit: number, windowMs: number): Promise<boolean> {
  const now = Date.now();
  const expired = sql<boolean>`login_failures.window_start_ms + ${windowMs} <= ${now}`;
  const rows = await db
    .insertInto('login_failures')
    .values([...new Set(keys)].sort().map((key) => ({ key, failures: 1, window_start_ms: now })))
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        failures: sql`case when ${expired} then 1 else login_failures.failures + 1 end`,
        window_start_ms: sql`case when ${expired} then ${now} else login_failures.window_start_ms end`,
      }),
    )
    .returning('failures')
    .execute();
  if (rows.every((row) => Number(row.failures) <= limit)) return true;
  await releaseLoginAttempt(db, keys);
  return false;
}

/** Gives back one reservation per key (never below zero). */
export async function releaseLoginAttempt(db: Db, keys: string[]): Promise<void> {
  await db
    .updateTable('login_failures')
    .set({ failures: sql`login_failures.failures - 1` })
    .where('key', 'in', keys)
    .where('failures', '>', 0)
    .execute();
}

/** The right password: the address's reservation is given back, the account's failures are forgotten. */
export async function loginSucceeded(db: Db, addressKey: string, accountKey: string): Promise<void> {
  await releaseLoginAttempt(db, [addressKey]);
  await db.deleteFrom('login_failures').where('key', '=', accountKey).execute();
}
