/**
 * The idle screen, shown by the display thread at start and by both payment flows when a session
 * ends: one constructor below them all, so the flows need not reach up into the display's layout.
 */
import type { Screen } from './messages.js';

/** The idle screen: the machine's static QR (machine.uniQr). */
export function idleScreen(uniQr: string): Screen {
  return { kind: 'idle', qrText: uniQr };
}
