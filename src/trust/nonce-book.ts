/**
 * Nonces of the signed statements a machine accepted, kept durably until their window has passed
 * (docs/decisions/fleet-link.md: "a nonce seen before, kept durably for the window"). A statement is recorded
 * before it acts, with an atomic, fsynced write, so neither a restart nor a power cut lets the same
 * signed command run twice.
 *
 * If the file is found damaged (it never is torn: it is written atomically; but a disk error or a
 * person can damage it), what was seen is unknown: the book starts empty and refuses every statement
 * issued before that moment, so only commands signed afresh are taken.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeFileAtomic } from '../core/durable-file.js';
import { CLOCK_SKEW_MS } from './signed.js';

/** Commands are rate-bound and live at most 15 min; more than this many at once is a flood. */
export const MAX_NONCES = 4096;
/**
 * What the book holds at most when each signer has its share (admit's `share`): the shares add up
 * to MAX_NONCES, and a book read from disk may hold entries of keys no longer trusted until their
 * windows pass. Bounded, so the file stays under MAX_FILE_BYTES.
 */
export const MAX_HELD = 2 * MAX_NONCES;
const MAX_FILE_BYTES = 1024 * 1024;
const WITHIN = 'signed statements within their windows';

export type NonceVerdict = { ok: true } | { ok: false; reason: 'replayed' | 'full' | 'before-loss'; message: string };

interface Stored {
  v: 1;
  /** Statements issued before this (epoch ms) are refused: the record of what came before was lost. */
  floor: number;
  /** `<signer> <nonce>` -> expiresAt (epoch ms); the signer is the key's fingerprint (key-owner.ts). */
  seen: Record<string, number>;
}

export class NonceBook {
  private readonly seen = new Map<string, number>();
  private floor = 0;
  /** Why the book was started afresh at load, when it was (for a warning in the log). */
  readonly lostBecause: string | null;

  constructor(
    private readonly path: string,
    nowMs: number,
  ) {
    this.lostBecause = this.load(nowMs);
  }

  private load(nowMs: number): string | null {
    if (!existsSync(this.path)) return null;
    try {
      if (statSync(this.path).size > MAX_FILE_BYTES) throw new Error(`larger than ${MAX_FILE_BYTES} bytes`);
      const value = JSON.parse(readFileSync(this.path, 'utf8')) as Stored;
      if (value.v !== 1 || typeof value.floor !== 'number' || typeof value.seen !== 'object' || value.seen === null)
        throw new Error('not a nonce book');
      this.floor = value.floor;
      for (const [k, exp] of Object.entries(value.seen)) if (typeof exp === 'number') this.seen.set(k, exp);
      return null;
    } catch (err) {
      this.floor = nowMs;
      return (
        `${this.path} is damaged (${(err as Error).message.slice(0, 120)}` +
        `): statements issued before now are refused`
      );
    }
  }

  /**
   * Records the statement's nonce (durably) unless it was seen, or the book is full. With `share`,
   * `signer` may hold at most that many nonces (its share: docs/security.md, "Budgets and nonce
   * shares per key"), so one signer filling its share refuses only its own next statement.
   */
  admit(
    signer: string,
    nonce: string,
    issuedAt: number,
    expiresAt: number,
    nowMs: number,
    share?: number,
  ): NonceVerdict {
    if (issuedAt < this.floor)
      return {
        ok: false,
        reason: 'before-loss',
        message: 'issued before this machine lost its record of seen nonces; sign it again',
      };
    const key = `${signer} ${nonce}`;
    if (this.seen.has(key))
      return { ok: false, reason: 'replayed', message: `the nonce ${nonce} was seen before (a replay)` };
    let held = 0;
    for (const [k, exp] of this.seen) {
      if (exp + CLOCK_SKEW_MS < nowMs) this.seen.delete(k);
      else if (k.startsWith(`${signer} `)) held += 1;
    }
    if (share !== undefined && held >= share) {
      const message = `this key's share of the book is full (${share} ${WITHIN}); try again later`;
      return { ok: false, reason: 'full', message };
    }
    const cap = share === undefined ? MAX_NONCES : MAX_HELD;
    if (this.seen.size >= cap) {
      return { ok: false, reason: 'full', message: `the book is full (${cap} ${WITHIN}); try again later` };
    }
    this.seen.set(key, expiresAt);
    this.save();
    return { ok: true };
  }

  private save(): void {
    const stored: Stored = { v: 1, floor: this.floor, seen: Object.fromEntries(this.seen) };
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o750 });
    writeFileAtomic(this.path, JSON.stringify(stored), 0o600);
  }

  get size(): number {
    return this.seen.size;
  }
}
