/**
 * TransactionIds qrvend creates itself (Dynamic QR; Static QR takes the one from Start).
 *
 * `QV` + time in base 36 + 10 random base-36 characters: 20 characters, within the seed's 8..40,
 * sortable by creation time in the ledger, and unique across restarts and machines without any
 * state on disk (a counter would need one, and a reflashed image would restart it).
 */
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export function newTransactionId(nowMs: number = Date.now()): string {
  const time = nowMs.toString(36).toUpperCase().padStart(8, '0');
  const bytes = randomBytes(10);
  let rand = '';
  for (const b of bytes) rand += ALPHABET[b % 36];
  return `QV${time}${rand}`;
}
