/**
 * The line script of `qrvend sim vmc`: one action per line, `#` starts a comment.
 *
 *   enable | disable                the VMC enables / disables the reader
 *   select <item> <price>           the consumer selects item <item> at <price> (e.g. select 12 1.50)
 *   card <item> <price>             the consumer pays at the card reader at the other address (quirks.cardReader)
 *   success | fail [code]           the approved vend is dispensed / fails (code 3 by default)
 *   cancel                          the consumer cancels (selection and session)
 *   end                             session complete
 *   reset                           the VMC resets the reader (mid-session, mid-vend: any time)
 *   inactive                        a VMC reset the board reports only as c,STATUS,INACTIVE
 *   cash-sale <item> <price>        the VMC reports a sale paid to another device (c,CASHSALE,...)
 *   board-reset                     the adapter board restarts (loses its configuration)
 *   silent <ms>                     the board sends nothing for <ms>
 *   noise <count>                   <count> lines of noise
 *   wait <ms>                       pause the script
 *   auto success|fail|manual        what happens after each approval from now on
 *   status | records                print the simulator's state / what it has vended (JSON)
 */
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import type { VmcSimulator, VendPolicy } from './simulator.js';
import { reportCashSale, resetSeenAsInactive } from './field-lines.js';

export type ScriptStep =
  | {
      op:
        | 'enable'
        | 'disable'
        | 'success'
        | 'cancel'
        | 'end'
        | 'reset'
        | 'inactive'
        | 'board-reset'
        | 'status'
        | 'records';
    }
  | { op: 'select' | 'cash-sale'; item: number; price: number }
  | { op: 'card'; item: number; price: number }
  | { op: 'fail'; code: number }
  | { op: 'silent' | 'wait'; ms: number }
  | { op: 'noise'; count: number }
  | { op: 'auto'; policy: VendPolicy };

const SIMPLE = new Set([
  'enable',
  'disable',
  'success',
  'cancel',
  'end',
  'reset',
  'inactive',
  'board-reset',
  'status',
  'records',
]);

/** One script line; null for blank lines and comments. Throws CLI_USAGE naming what is wrong. */
export function parseStep(raw: string, lineNo = 1): ScriptStep | null {
  const text = raw.replace(/#.*$/, '').trim();
  if (text === '') return null;
  const [op = '', ...args] = text.split(/\s+/);
  const fail = (why: string): never => {
    throw new QrvendError(ErrorCodes.CLI_USAGE, `script line ${lineNo} ("${text}"): ${why}`, {
      hint: 'see `qrvend sim vmc --help` for the script commands',
    });
  };
  const int = (s: string | undefined, what: string, max: number): number => {
    if (s === undefined || !/^\d+$/.test(s) || Number(s) > max) fail(`${what} must be a whole number 0..${max}`);
    return Number(s);
  };
  const arity = (n: number) => {
    if (args.length !== n) fail(`${op} takes ${n} argument${n === 1 ? '' : 's'}`);
  };
  if (SIMPLE.has(op)) {
    arity(0);
    return { op } as ScriptStep;
  }
  switch (op) {
    case 'select':
    case 'cash-sale':
    case 'card': {
      arity(2);
      const item = int(args[0], 'item', 65535);
      if (!/^\d{1,7}(\.\d{1,3})?$/.test(args[1]!)) fail('price must be a decimal amount such as 1.50');
      return { op, item, price: Number(args[1]) };
    }
    case 'fail':
      if (args.length > 1) fail('fail takes at most one argument (the c,ERR,VEND code)');
      return { op, code: args.length === 1 ? int(args[0], 'code', 999) : 3 };
    case 'silent':
    case 'wait':
      arity(1);
      return { op, ms: int(args[0], 'milliseconds', 3_600_000) };
    case 'noise':
      arity(1);
      return { op, count: int(args[0], 'count', 1_000_000) };
    case 'auto':
      arity(1);
      if (args[0] !== 'success' && args[0] !== 'fail' && args[0] !== 'manual')
        fail('auto takes success, fail or manual');
      return { op, policy: args[0] as VendPolicy };
    default:
      return fail(`unknown command "${op}"`);
  }
}

/** A whole script, checked before anything runs. */
export function parseScript(text: string): ScriptStep[] {
  const steps: ScriptStep[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const step = parseStep(line, i + 1);
    if (step) steps.push(step);
  });
  return steps;
}

/** Runs one step; returns what to print (false from an action means the VMC could not do it now). */
export async function runStep(sim: VmcSimulator, step: ScriptStep, signal?: AbortSignal): Promise<string | null> {
  const did = (ok: boolean) =>
    ok ? null : `${step.op}: not possible in the current state ${JSON.stringify(sim.state())}`;
  switch (step.op) {
    case 'enable':
      return did(sim.enable());
    case 'disable':
      return did(sim.disable());
    case 'select':
      return did(sim.select(step.item, step.price));
    case 'card':
      return did(sim.cardSale(step.item, step.price));
    case 'success':
      return did(sim.vendSuccess());
    case 'fail':
      return did(sim.vendFailure(step.code));
    case 'cancel':
      return did(sim.cancel());
    case 'end':
      return did(sim.endSession());
    case 'reset':
      sim.resetReader();
      return null;
    case 'inactive':
      resetSeenAsInactive(sim);
      return null;
    case 'cash-sale':
      reportCashSale(sim, step.item, step.price);
      return null;
    case 'board-reset':
      sim.resetBoard();
      return null;
    case 'silent':
      sim.silent(step.ms);
      return null;
    case 'noise':
      await sim.noise(step.count);
      return null;
    case 'wait':
      // Abortable: a SIGTERM must not wait for the end of a long pause (docs/decisions/hardening.md item 15).
      await new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const timer = setTimeout(() => (signal?.removeEventListener('abort', onAbort), resolve()), step.ms);
        const onAbort = () => (clearTimeout(timer), resolve());
        signal?.addEventListener('abort', onAbort, { once: true });
      });
      return null;
    case 'auto':
      sim.setVendPolicy(step.policy);
      return null;
    case 'status':
      return JSON.stringify(sim.state());
    case 'records':
      return JSON.stringify(sim.records());
  }
}

export async function runScript(
  sim: VmcSimulator,
  steps: readonly ScriptStep[],
  print: (text: string) => void,
): Promise<void> {
  for (const step of steps) {
    const out = await runStep(sim, step);
    if (out !== null) print(out);
  }
}
