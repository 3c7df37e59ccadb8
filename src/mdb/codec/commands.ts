/**
 * Host commands: BoardCommand <-> text. The agent encodes; the VMC simulator parses (and, like
 * the board, answers an unparseable command with an error line instead of failing).
 */
import { parseAmount, formatAmount } from './amount.js';
import type { BoardCommand, Parsed } from './types.js';

const SETCONF = /^([a-z0-9-]{1,40})=([\x21-\x7e]{1,40})$/;

export function encodeCommand(cmd: BoardCommand, decimalPlaces: number): string {
  switch (cmd.kind) {
    case 'version':
      return 'V';
    case 'enable':
      return cmd.enabled ? 'C,1' : 'C,0';
    case 'setconf':
      return `C,SETCONF,${cmd.key}=${cmd.value}`;
    case 'start':
      return `C,START,${formatAmount(cmd.funds, decimalPlaces)}`;
    case 'vend-approve':
      return `C,VEND,${formatAmount(cmd.amount, decimalPlaces)}`;
    case 'vend-deny':
      return 'C,VEND,-1';
    case 'stop':
      return 'C,STOP';
  }
}

export function parseCommand(line: string): Parsed<BoardCommand> {
  const bad = (reason: 'empty' | 'unknown' | 'malformed' | 'binary'): Parsed<BoardCommand> => ({
    ok: false,
    reason,
    line,
  });
  if (line.length === 0) return bad('empty');
  if (!/^[\x20-\x7e]*$/.test(line)) return bad('binary');
  if (line === 'V') return { ok: true, value: { kind: 'version' } };
  const f = line.split(',');
  if (f[0] !== 'C') return bad('unknown');
  switch (f[1]) {
    case '0':
    case '1':
      return f.length === 2 ? { ok: true, value: { kind: 'enable', enabled: f[1] === '1' } } : bad('malformed');
    case 'STOP':
      return f.length === 2 ? { ok: true, value: { kind: 'stop' } } : bad('malformed');
    case 'SETCONF': {
      const m = f.length === 3 ? SETCONF.exec(f[2] ?? '') : null;
      return m ? { ok: true, value: { kind: 'setconf', key: m[1]!, value: m[2]! } } : bad('malformed');
    }
    case 'START': {
      const funds = f.length === 3 ? parseAmount(f[2] ?? '') : null;
      return funds === null ? bad('malformed') : { ok: true, value: { kind: 'start', funds } };
    }
    case 'VEND': {
      if (f.length !== 3) return bad('malformed');
      if (f[2] === '-1') return { ok: true, value: { kind: 'vend-deny' } };
      const amount = parseAmount(f[2] ?? '');
      return amount === null ? bad('malformed') : { ok: true, value: { kind: 'vend-approve', amount } };
    }
    default:
      return bad('unknown');
  }
}
