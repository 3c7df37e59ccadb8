/**
 * Whose share a command message spends before it is parsed (docs/security.md, "Budgets per
 * source"). A broker account that may publish on a machine's `cmd/` topics can send as much as the
 * broker carries; one shared intake budget let a flood naming keys the machine does not know
 * take every trusted key's share of it (1,500 pings, an operator's reader.disable, 1,500 more: the
 * operator's command went unanswered). So the intake is split by what a message names, read from
 * its raw bytes without building any JSON:
 *
 * - a message that names a key of the trust file (`"keyId":"<id>"`, as every signer of ours writes
 *   its signature or the relay its voucher) spends the trusted keys' share (`trusted`, or the
 *   relay's `start` on the relayed topics: rate-bound.ts);
 * - everything else (unsigned, a key the machine does not know, unreadable, or a key id spelled
 *   with escapes that no signer of ours writes) spends the `untrusted` share, which nothing a
 *   trusted key sends ever touches.
 *
 * A forger can put a trusted key's id into a message (the id is no secret): that spends the trusted
 * share, as before the split, and its signature is still checked after the free checks
 * (command-gate.ts), from the shared Ed25519 budget (docs/security.md says what such a flood can
 * still do). The scan costs a search through the message, as receiving it did; the parse, the
 * checks and the reply that follow are what the shares bound.
 */
import type { Keyring } from '../../trust/keys.js';

/**
 * The members whose string value names a key: a signature's or voucher's `keyId`. Whatever else
 * comes to name a key of the trust file in a command (a certificate's issuer) is added here, so
 * what it names is read as cheaply, before any signature work.
 */
export const KEY_NAMING_MEMBERS: readonly string[] = ['keyId'];
const NEEDLES = KEY_NAMING_MEMBERS.map((name) => Buffer.from(JSON.stringify(name)));
/** Mentions looked at in one message, per member: a signed command or a voucher has one. */
const MAX_MENTIONS = 4;
/** The longest key id a trust file may hold (keys.ts, KEY_ID). */
const MAX_KEY_ID = 64;
const QUOTE = 0x22;
const COLON = 0x3a;

function skipSpace(bytes: Buffer, at: number): number {
  let i = at;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
  return i;
}

/** The id of a trust-file key the raw message names as `"keyId":"<id>"` (the first such), or null. */
export function namedTrustedKey(payload: Buffer, keyring: Keyring | null): string | null {
  if (keyring === null || keyring.byId.size === 0) return null;
  for (const needle of NEEDLES) {
    const id = namedBy(payload, needle, keyring);
    if (id !== null) return id;
  }
  return null;
}

/** The first of MAX_MENTIONS values of the member `needle` (`"name"`) that is a key id of `keyring`. */
function namedBy(payload: Buffer, needle: Buffer, keyring: Keyring): string | null {
  let from = 0;
  for (let mention = 0; mention < MAX_MENTIONS; mention += 1) {
    const at = payload.indexOf(needle, from);
    if (at < 0) return null;
    from = at + needle.length;
    let i = skipSpace(payload, from);
    if (payload[i] !== COLON) continue;
    i = skipSpace(payload, i + 1);
    if (payload[i] !== QUOTE) continue;
    const end = payload.indexOf(QUOTE, i + 1);
    if (end < 0 || end - i - 1 > MAX_KEY_ID) continue;
    // Key ids are ASCII letters, digits and . _ : - (keys.ts): latin1 reads them as they are.
    const id = payload.toString('latin1', i + 1, end);
    if (keyring.byId.has(id)) return id;
  }
  return null;
}
