/**
 * What each alarm means and what to do, as docs/fleet.md (Alarms) and the pages it links
 * (docs/mdb.md, docs/dex.md, docs/updates.md) document it. A code a newer agent sends that this
 * console does not know shows with the generic line.
 */
import type { AlarmCode } from '../../fleet/contract/index.js';
import { html, type Html } from './html.js';

export const ALARM_ADVICE: Record<AlarmCode, string> = {
  READER_OFFLINE:
    'The serial link to the MDB board is down: check the board cable and power, then `qrvend doctor` on the machine.',
  BOARD_SILENT:
    'The port is open but the board sends nothing: check the board is powered and wired to the VMC; `qrvend doctor`.',
  GATEWAY_UNREACHABLE:
    "Gateway calls have failed for over a minute: check the machine's network; payments wait in its outbox.",
  OUTBOX_DEAD_LETTER: 'A payment needs a person: `qrvend outbox` on the machine lists it (docs/operations.md).',
  DISK_UNWRITABLE:
    'The ledger refuses writes and new sessions are refused: check the disk (full, read-only, worn SD card).',
  LEDGER_CORRUPT:
    'The ledger was damaged and replaced, or its identity changed: reconcile, then `qrvend ledger acknowledge-loss`.',
  CLOCK_UNSYNCED: 'The wall clock stepped: check NTP on the machine; durations are unaffected.',
  VMC_RESET_LOOP:
    'The VMC reset the reader 3 times in 10 minutes; the reader is held off the bus: see docs/mdb.md (reset loops).',
  BOARD_CONFIG_REFUSED:
    'The adapter board refused a C,SETCONF line: the reader stays disabled; the detail names the key (docs/mdb.md).',
  CONFIG_ROLLED_BACK:
    'A config.set left the agent unhealthy and was rolled back: fix the change and send a good config.set.',
  UPDATE_ROLLED_BACK:
    'An update failed its trial and the previous release runs again: the detail says why (docs/updates.md).',
  UPDATE_DEFERRED: 'A downloaded update waits for the machine to be idle past its deferral; it never forces a restart.',
  DEX_READ_FAILED: "3 audit reads in a row failed: check the DEX cable and the VMC's audit settings (docs/dex.md).",
  AUDIT_MISMATCH:
    "The VMC's cashless count and the ledger differ beyond the tolerance: " +
    'compare the audit and the sales (docs/dex.md).',
  GATEWAY_CURRENCY_MISMATCH:
    "The gateway approved in another currency than asked; the hold was cancelled in full: check the machine's " +
    "currency settings against the gateway's merchant account (docs/payments.md).",
  VEND_JOURNAL_FAILED:
    'The vend journal beside the ledger cannot be written: sales go on, but check the disk (docs/operations.md).',
};

export function adviceFor(code: string): string {
  return (
    (ALARM_ADVICE as Record<string, string>)[code] ?? 'Not known to this console version: see docs/fleet.md (Alarms).'
  );
}

/** The advice as HTML: what the text puts in backticks (a command, a file) is shown as <code>. */
export function adviceHtml(code: string): Html {
  const pieces = adviceFor(code).split('`');
  // An odd piece was inside backticks; an unpaired backtick at the end stays as text.
  const closed = pieces.length % 2 === 1;
  return html`${pieces.map((piece, i) =>
    i % 2 === 1 && (closed || i < pieces.length - 1) ? html`<code>${piece}</code>` : i % 2 === 1 ? `\`${piece}` : piece,
  )}`;
}
