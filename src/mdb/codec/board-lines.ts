/**
 * Board lines: text <-> BoardLine. Parsing never throws: whatever the wire carries comes back as
 * a value or as noise with a reason, so a burst of garbage costs a counter, not the process.
 * The encoder is what the VMC simulator speaks, so both sides share one definition of the protocol.
 */
import { parseAmount, formatAmount } from './amount.js';
import type { BoardLine, IgnoredLineKind, Parsed, VmcReaderStatus } from './types.js';

const PRINTABLE = /^[\x20-\x7e]*$/;
const ITEM = /^\d{1,5}$/;
const FIELD = /^[\x21-\x2b\x2d-\x7e]{1,64}$/; // printable, no comma, no space
const VEND_ERROR = /^VEND (\d{1,3})$/;

function noise(reason: 'empty' | 'binary' | 'unknown' | 'malformed', line: string): Parsed<BoardLine> {
  return { ok: false, reason, line };
}

function ok(value: BoardLine): Parsed<BoardLine> {
  return { ok: true, value };
}

/** Parses one line (terminator already removed). Overlong lines are the framer's to drop. */
export function parseBoardLine(line: string): Parsed<BoardLine> {
  if (line.length === 0) return noise('empty', line);
  if (!PRINTABLE.test(line)) return noise('binary', line);
  const f = line.split(',');
  switch (f[0]) {
    case 'r':
      return line === 'r,ACK' ? ok({ kind: 'poll' }) : noise('unknown', line);
    case 'v': {
      if (f.length !== 3) return noise('malformed', line);
      const [, firmware = '', boardId = ''] = f;
      if (!FIELD.test(firmware) || !FIELD.test(boardId)) return noise('malformed', line);
      return ok({ kind: 'version', firmware, boardId });
    }
    case 'c':
      return parseCashless(f, line);
    default: {
      const what = IGNORED_PREFIXES[f[0] ?? ''];
      return what !== undefined && f.length >= 2 ? ok({ kind: 'ignored', what, line }) : noise('unknown', line);
    }
  }
}

/** Board lines of its other roles (docs.qibixx.com: API configuration, generic master, cashless master). */
const IGNORED_PREFIXES: Readonly<Record<string, IgnoredLineKind>> = {
  d: 'cashless-master',
  p: 'generic-master',
  m: 'master-mode',
  f: 'board-config',
};

/**
 * A cash sale (MDB 4.2 7.4.10, command 13-05: price and item of a sale paid by coins, bills or the
 * other cashless device), reported when the reader asked for it (the board's
 * `mdb-cashsale-enabled`). No public source quotes the board's line for it; both spellings
 * below follow the board's `c,<TOPIC>,...` and `c,STATUS,<STATE>,...` forms and are accepted
 * (test/fixtures/mdb/board-lines.txt, with the sources). The item keeps MDB's flag bits (b15 free vend,
 * b14 test vend, b13 negative vend, b12 token vend).
 */
function parseCashSale(fields: readonly string[], line: string): Parsed<BoardLine> {
  if (fields.length !== 2) return noise('malformed', line);
  const price = parseAmount(fields[0] ?? '');
  const item = fields[1] ?? '';
  if (price === null || !ITEM.test(item) || Number(item) > 65535) return noise('malformed', line);
  return ok({ kind: 'cash-sale', price, item: Number(item) });
}

function parseCashless(f: string[], line: string): Parsed<BoardLine> {
  switch (f[1]) {
    case '0':
    case '1':
      return f.length === 2 ? ok({ kind: 'enable-echo', enabled: f[1] === '1' }) : noise('malformed', line);
    case 'SET':
      return line === 'c,SET,OK' ? ok({ kind: 'set-ok' }) : noise('malformed', line);
    case 'STATUS':
      return parseStatus(f, line);
    case 'VEND':
      return line === 'c,VEND,SUCCESS' ? ok({ kind: 'vend-success' }) : noise('malformed', line);
    case 'CASHSALE':
      return parseCashSale(f.slice(2), line);
    case 'UNKNOWN':
      return ok({ kind: 'ignored', what: 'unknown-command', line });
    case 'ERR': {
      if (f.length < 3) return noise('malformed', line);
      const text = f.slice(2).join(',');
      if (text.length === 0) return noise('malformed', line);
      if (text.startsWith('VEND')) {
        const m = VEND_ERROR.exec(text);
        return m ? ok({ kind: 'vend-error', code: Number(m[1]) }) : noise('malformed', line);
      }
      return ok({ kind: 'error', text });
    }
    default:
      return noise('unknown', line);
  }
}

function parseStatus(f: string[], line: string): Parsed<BoardLine> {
  const status = f[2];
  switch (status) {
    case 'INACTIVE':
    case 'DISABLED':
    case 'ENABLED':
      return f.length === 3 ? ok({ kind: 'status', status }) : noise('malformed', line);
    // Some firmware echoes C,0 / C,1 this way instead of c,0 / c,1 (a public client of the board
    // expects c,STATUS,OFFLINE, c,SET,OK..., c,STATUS,ONLINE; test/fixtures/transcripts/).
    case 'OFFLINE':
    case 'ONLINE':
      return f.length === 3 ? ok({ kind: 'enable-echo', enabled: status === 'ONLINE' }) : noise('malformed', line);
    case 'IDLE': {
      if (f.length === 3) return ok({ kind: 'session-idle', funds: null });
      if (f.length !== 4) return noise('malformed', line);
      const funds = parseAmount(f[3] ?? '');
      return funds === null ? noise('malformed', line) : ok({ kind: 'session-idle', funds });
    }
    case 'VEND': {
      if (f.length !== 5) return noise('malformed', line);
      const price = parseAmount(f[3] ?? '');
      const item = f[4] ?? '';
      if (price === null || !ITEM.test(item) || Number(item) > 65535) return noise('malformed', line);
      return ok({ kind: 'vend-request', price, item: Number(item) });
    }
    case 'CASHSALE':
      return parseCashSale(f.slice(3), line);
    default:
      return noise('unknown', line);
  }
}

/** The line the board sends for a BoardLine (the VMC simulator's side). */
export function encodeBoardLine(line: BoardLine, decimalPlaces: number): string {
  switch (line.kind) {
    case 'version':
      return `v,${line.firmware},${line.boardId}`;
    case 'enable-echo':
      return line.enabled ? 'c,1' : 'c,0';
    case 'set-ok':
      return 'c,SET,OK';
    case 'status':
      return `c,STATUS,${line.status satisfies VmcReaderStatus}`;
    case 'session-idle':
      return line.funds === null ? 'c,STATUS,IDLE' : `c,STATUS,IDLE,${formatAmount(line.funds, decimalPlaces)}`;
    case 'vend-request':
      return `c,STATUS,VEND,${formatAmount(line.price, decimalPlaces)},${line.item}`;
    case 'vend-success':
      return 'c,VEND,SUCCESS';
    case 'vend-error':
      return `c,ERR,VEND ${line.code}`;
    case 'error':
      return `c,ERR,${line.text}`;
    case 'poll':
      return 'r,ACK';
    case 'cash-sale':
      return `c,CASHSALE,${formatAmount(line.price, decimalPlaces)},${line.item}`;
    case 'ignored':
      return line.line;
  }
}
