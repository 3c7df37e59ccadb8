/**
 * What each operator key may spend (docs/security.md, "Budgets and nonce shares per key"): a leaked
 * key floods only its own budget and its own share of the nonce book, and within one key the
 * scopes `operate` and `configure` keep a reserve that its reads cannot take.
 *
 * Everything here is per key of the trust file (at most MAX_KEYS), keyed by the public key's
 * fingerprint for what is spent and by the key's id for what health shows, so its size is bounded
 * by the trust file. Time is an input; no timers.
 */
import { MAX_KEYS, SCOPES, type Keyring, type Scope } from '../../trust/keys.js';
import { keyFingerprint } from '../../trust/key-owner.js';
import { MAX_NONCES } from '../../trust/nonce-book.js';
import { CommandRateBound } from './rate-bound.js';

/** Commands run per key and scope after their signature checked (the one `operator` budget it replaces). */
export const PER_KEY_BUDGET = { perSecond: 10, burst: 20 } as const;
/** Scopes whose commands change something: a key's reads never take their reserve. */
export const RESERVED_SCOPES: ReadonlySet<Scope> = new Set(['operate', 'configure']);
/** Part of a key's nonce share its other scopes leave to `operate` and `configure`. */
export const NONCE_RESERVE_FRACTION = 0.25;
/** Ed25519 checks a read-scope signature leaves in the shared `verify` budget for the other scopes. */
export const VERIFY_RESERVE = 50;

/** A verified key as the budgets know it. */
export interface KeySpender {
  id: string;
  fingerprint: string;
  scope: Scope;
  /** How many nonces this key may hold when signing for `scope` (NonceBook.admit's `share`). */
  nonceShare: number;
}

export interface KeyCounts {
  /** Commands dropped unanswered by this key's budget. */
  dropped: number;
  /** Commands refused under this key's id (signature, scope, window, nonce). */
  refused: number;
}

/** Each key's share of the nonce book: the book divided evenly among the trust file's keys. */
export function nonceShareOf(keyring: Keyring, keyId: string, scope: Scope): number {
  const share = Math.floor(MAX_NONCES / Math.max(1, keyring.byId.size));
  const key = keyring.byId.get(keyId);
  const reserves = key !== undefined && [...key.scopes].some((s) => RESERVED_SCOPES.has(s));
  if (!reserves || RESERVED_SCOPES.has(scope)) return share;
  return Math.max(1, share - Math.ceil(share * NONCE_RESERVE_FRACTION));
}

/** The spender for a key of `keyring` signing for `scope`, or null when the keyring has no such key. */
export function spenderOf(keyring: Keyring, keyId: string, scope: Scope): KeySpender | null {
  const key = keyring.byId.get(keyId);
  if (key === undefined) return null;
  return { id: keyId, fingerprint: keyFingerprint(key.key), scope, nonceShare: nonceShareOf(keyring, keyId, scope) };
}

const MAX_BUCKETS = MAX_KEYS * SCOPES.length;

export class KeyBudgets {
  private readonly buckets = new Map<string, CommandRateBound>();
  private readonly counts = new Map<string, KeyCounts>();
  /** Every command dropped by a key's budget (health's commandsDropped). */
  totalDropped = 0;

  constructor(private readonly budget: { perSecond: number; burst: number } = PER_KEY_BUDGET) {}

  /** Spends one command of `spender`'s budget for its scope; false: dropped (counted). */
  take(spender: KeySpender, nowMs: number): boolean {
    const name = `${spender.fingerprint} ${spender.scope}`;
    let bucket = this.buckets.get(name);
    if (bucket === undefined) {
      // Only keys of the trust file get here; the bound holds even if that were not so.
      if (this.buckets.size >= MAX_BUCKETS) return this.drop(spender.id);
      bucket = new CommandRateBound(this.budget.perSecond, this.budget.burst, nowMs);
      this.buckets.set(name, bucket);
    }
    return bucket.take(nowMs) || this.drop(spender.id);
  }

  private drop(keyId: string): false {
    this.totalDropped += 1;
    return this.count(keyId, 'dropped');
  }

  /** Counts a refusal under a key id of the trust file (never an id only claimed: unbounded). */
  refused(keyId: string): void {
    this.count(keyId, 'refused');
  }

  private count(keyId: string, what: keyof KeyCounts): false {
    let counts = this.counts.get(keyId);
    if (counts === undefined) {
      if (this.counts.size >= MAX_KEYS) return false;
      counts = { dropped: 0, refused: 0 };
      this.counts.set(keyId, counts);
    }
    counts[what] += 1;
    return false;
  }

  /** Per key id, the keys with anything to show (health). */
  byKey(): Record<string, KeyCounts> {
    return Object.fromEntries([...this.counts].map(([id, c]) => [id, { ...c }]));
  }
}

/** Commands served at once (each may wait on the payment side). */
export const MAX_COMMANDS_IN_FLIGHT = 8;
/** Slots only `operate` and `configure` commands take, so reads in progress never keep them out. */
export const IN_FLIGHT_RESERVE = 2;
/** Slots one key may hold at once, so one key's commands in progress leave room for another's. */
export const IN_FLIGHT_PER_KEY = MAX_COMMANDS_IN_FLIGHT / 2;

/** Commands in progress, in total and per key (by fingerprint; at most MAX_COMMANDS_IN_FLIGHT names). */
export class CommandsInFlight {
  private total = 0;
  private readonly byKey = new Map<string, number>();

  /** Takes a slot for a command of `spender` (null: unsigned); false: none free for it. */
  enter(spender: KeySpender | null): boolean {
    const reserved = spender !== null && RESERVED_SCOPES.has(spender.scope);
    if (this.total >= MAX_COMMANDS_IN_FLIGHT - (reserved ? 0 : IN_FLIGHT_RESERVE)) return false;
    if (spender !== null) {
      const held = this.byKey.get(spender.fingerprint) ?? 0;
      if (held >= IN_FLIGHT_PER_KEY) return false;
      this.byKey.set(spender.fingerprint, held + 1);
    }
    this.total += 1;
    return true;
  }

  leave(spender: KeySpender | null): void {
    this.total -= 1;
    if (spender === null) return;
    const held = (this.byKey.get(spender.fingerprint) ?? 1) - 1;
    if (held <= 0) this.byKey.delete(spender.fingerprint);
    else this.byKey.set(spender.fingerprint, held);
  }
}
