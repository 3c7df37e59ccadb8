/**
 * What a machine says for itself (docs/relay.md, "What the relay believes"): its retained status
 * (online, takes relayed Starts, the identifiers it answers to), its last will, and its command
 * replies, each signed with the machine's own Ed25519 key. The public half is in the operator's
 * signed registry of machines; the private half never leaves the machine.
 *
 * The signed bytes are a statement of kind `machine-status` or `machine-reply` built by the
 * shared helpers (canonical.ts, signed.ts). The statement names the machine, the topic it is
 * for, the key's id, and where it stands in the machine's own order:
 *   - `boot`: random per agent start; `conn`: the broker connection of that start (counted up);
 *     `seq`: counted up per statement of that start (monotonic, never the wall clock);
 *   - a last will is signed when its connection opens and says only "connection `conn` of boot
 *     `boot` ended": it ends that connection's statuses and no other.
 * The relay keeps the newest it believed per machine (statusOrder) and refuses an older one, so a
 * replayed status can neither mark a machine offline nor bring it back.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { KEY_ID, type Keyring, type Scope } from './keys.js';
import {
  MAX_DOCUMENT_LIFETIME_MS,
  MAX_LIFETIME_MS,
  signStatement,
  verifyStatement,
  type Checked,
  type Signature,
} from './signed.js';

export const MACHINE_STATUS_KIND = 'machine-status';
export const MACHINE_REPLY_KIND = 'machine-reply';
/** A signed status is believed this long: the machine signs it again well before (STATUS_REFRESH_MS). */
export const STATUS_LIFETIME_MS = MAX_LIFETIME_MS;
/** How often a machine signs and publishes its status again, changed or not. */
export const STATUS_REFRESH_MS = 5 * 60_000;
/** A reply answers one request that waits seconds: a minute is plenty, with the skew either way. */
export const REPLY_LIFETIME_MS = 60_000;
/** A last will fires whenever its connection ends: its window is a document's; its order is its connection. */
export const WILL_LIFETIME_MS = MAX_DOCUMENT_LIFETIME_MS;

/**
 * Machine keys live only in the registry, never in a trust file: the keyring built for one machine
 * holds that machine's keys alone, so the scope check of verifyStatement is passed by construction.
 */
const MACHINE_SCOPE = 'machine' as unknown as Scope;

export const MachineSigSchema = z.strictObject({
  boot: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  conn: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  seq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  will: z.literal(true).optional(),
  signature: z.unknown(),
});
export type MachineSig = z.infer<typeof MachineSigSchema> & { signature: Signature };

/** The status fields the relay acts on. */
export interface StatusFacts {
  online: boolean;
  acceptsRelayedStart: boolean;
  terminalId: string | null;
  uniQr: string | null;
}

/** A reply as sent: what the relay acts on is all of it. */
export interface ReplyFacts {
  command: string;
  correlationId: string | null;
  ok: boolean;
  result?: unknown;
  error?: unknown;
}

type Place = Pick<MachineSig, 'boot' | 'conn' | 'seq' | 'will'>;

function statusBody(machineId: string, keyId: string, place: Place, facts: StatusFacts): Record<string, unknown> {
  return {
    machineId,
    topic: 'status',
    keyId,
    boot: place.boot,
    conn: place.conn,
    seq: place.seq,
    will: place.will === true,
    online: facts.online,
    acceptsRelayedStart: facts.acceptsRelayedStart,
    terminalId: facts.terminalId,
    uniQr: facts.uniQr,
  };
}

function replyBody(machineId: string, keyId: string, place: Place, facts: ReplyFacts): Record<string, unknown> {
  // Through JSON, as the receiver sees it: an undefined member is no member.
  const plain = (value: unknown): unknown => (value === undefined ? null : JSON.parse(JSON.stringify(value)));
  return {
    machineId,
    topic: 'replies',
    keyId,
    boot: place.boot,
    conn: place.conn,
    seq: place.seq,
    command: facts.command,
    correlationId: facts.correlationId,
    ok: facts.ok,
    result: facts.ok ? plain(facts.result) : null,
    error: facts.ok ? null : plain(facts.error),
  };
}

/** The machine's side: one per agent start (a fresh boot id), connections and statements counted up. */
export class MachineSigner {
  readonly boot = randomBytes(16).toString('base64url');
  private conn = 0;
  private seq = 0;

  constructor(
    private readonly machineId: string,
    private readonly keyId: string,
    private readonly key: KeyObject,
  ) {}

  /** A new broker connection opens: later statuses and the will belong to it. */
  nextConnection(): void {
    this.conn += 1;
  }

  private sign(kind: string, body: Record<string, unknown>, place: Place, nowMs: number, lifetimeMs: number) {
    const maxLifetimeMs = Math.max(lifetimeMs, MAX_LIFETIME_MS);
    const signature = signStatement(kind, body, { keyId: this.keyId, key: this.key, nowMs, lifetimeMs, maxLifetimeMs });
    return { ...place, signature };
  }

  status(facts: StatusFacts, nowMs: number): MachineSig {
    const place: Place = { boot: this.boot, conn: this.conn, seq: ++this.seq };
    const body = statusBody(this.machineId, this.keyId, place, facts);
    return this.sign(MACHINE_STATUS_KIND, body, place, nowMs, STATUS_LIFETIME_MS);
  }

  /** The last will of the current connection: `{online:false}`, signed now, true whenever it fires. */
  will(nowMs: number): MachineSig {
    const place: Place = { boot: this.boot, conn: this.conn, seq: ++this.seq, will: true };
    const facts: StatusFacts = { online: false, acceptsRelayedStart: false, terminalId: null, uniQr: null };
    const body = statusBody(this.machineId, this.keyId, place, facts);
    return this.sign(MACHINE_STATUS_KIND, body, place, nowMs, WILL_LIFETIME_MS);
  }

  reply(facts: ReplyFacts, nowMs: number): MachineSig {
    const place: Place = { boot: this.boot, conn: this.conn, seq: ++this.seq };
    const body = replyBody(this.machineId, this.keyId, place, facts);
    return this.sign(MACHINE_REPLY_KIND, body, place, nowMs, REPLY_LIFETIME_MS);
  }
}

/** One machine's public keys, by id (from its registry entry). */
export function machineKeyring(keys: ReadonlyArray<{ id: string; key: KeyObject }>): Keyring {
  const scopes: ReadonlySet<Scope> = new Set([MACHINE_SCOPE]);
  return { source: null, byId: new Map(keys.map((k) => [k.id, { id: k.id, key: k.key, scopes }])) };
}

export type MachineRefusal = Exclude<Checked, { ok: true }>['reason'] | 'no-machine-key';
export type MachineChecked = { ok: true; sig: MachineSig } | { ok: false; reason: MachineRefusal; message: string };
type Refused = Extract<MachineChecked, { ok: false }>;
const refused = (reason: MachineRefusal, message: string): Refused => ({ ok: false, reason, message });

function parseSig(raw: unknown): Refused | z.infer<typeof MachineSigSchema> {
  if (raw === undefined || raw === null) {
    const why = "unsigned; the relay believes only what the machine signed with its key (the registry's machineKeys)";
    return refused('unsigned', why);
  }
  const parsed = MachineSigSchema.safeParse(raw);
  const where = parsed.success ? '' : (parsed.error.issues[0]?.path.join('.') ?? '');
  if (!parsed.success) return refused('malformed', `machineSig.${where} is malformed`);
  if (!KEY_ID.test(String((parsed.data.signature as { keyId?: unknown } | null)?.keyId ?? ''))) {
    return refused('malformed', 'machineSig.signature.keyId is malformed');
  }
  return parsed.data;
}

type BodyOf = (keyId: string, place: Place) => Record<string, unknown>;

type Keys = Keyring | null;

function check(kind: string, raw: unknown, keyring: Keys, nowMs: number, body: BodyOf, maxMs: number): MachineChecked {
  if (keyring === null || keyring.byId.size === 0) {
    return refused('no-machine-key', 'the registry gives this machine no key (machineKeys): it cannot be believed');
  }
  const parsed = parseSig(raw);
  if ('ok' in parsed) return parsed;
  const keyId = (parsed.signature as { keyId: string }).keyId;
  const { boot, conn, seq, signature } = parsed;
  const place: Place = { boot, conn, seq, ...(parsed.will ? { will: true as const } : {}) };
  const statement = { kind, body: body(keyId, place), signature, scope: MACHINE_SCOPE };
  const checked = verifyStatement({ ...statement, keyring, nowMs, maxLifetimeMs: maxMs });
  if (!checked.ok) return checked;
  if (checked.signature === undefined) return refused('malformed', 'no signature');
  return { ok: true, sig: { ...parsed, signature: checked.signature } };
}

/** Checks a status's machineSig against the machine's keys; a will is allowed its long window. */
export function checkMachineStatus(
  machineId: string,
  facts: StatusFacts,
  raw: unknown,
  keyring: Keyring | null,
  nowMs: number,
): MachineChecked {
  const will = typeof raw === 'object' && raw !== null && (raw as { will?: unknown }).will === true;
  const body: BodyOf = (keyId, place) => statusBody(machineId, keyId, place, facts);
  return check(MACHINE_STATUS_KIND, raw, keyring, nowMs, body, will ? WILL_LIFETIME_MS : STATUS_LIFETIME_MS);
}

export function checkMachineReply(
  machineId: string,
  facts: ReplyFacts,
  raw: unknown,
  keyring: Keyring | null,
  nowMs: number,
): MachineChecked {
  const body: BodyOf = (keyId, place) => replyBody(machineId, keyId, place, facts);
  return check(MACHINE_REPLY_KIND, raw, keyring, nowMs, body, REPLY_LIFETIME_MS);
}

/**
 * Whether `next` is newer than `held` in the machine's own order. Within one boot: a later
 * connection, or the same connection's will, or a later statement of it. Across boots the order is
 * unknown but for the wall clock: the later issue wins (a held status past its window is replaced
 * by the caller whatever this says).
 */
export function statusIsNewer(next: MachineSig, held: MachineSig): boolean {
  if (next.boot !== held.boot) return next.signature.issuedAt > held.signature.issuedAt;
  if (next.conn !== held.conn) return next.conn > held.conn;
  if (held.will === true) return false;
  if (next.will === true) return true;
  return next.seq > held.seq;
}
