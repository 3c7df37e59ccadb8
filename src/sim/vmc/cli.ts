/**
 * `qrvend sim vmc`: the VMC simulator on one end of a pty pair, driven by a line script (a file,
 * or stdin line by line). With --agent-pty it makes the pair itself (the project's relay, no
 * socat); otherwise --pty names an end someone else made. When the pty goes away (its maker
 * restarted) it keeps trying to reopen it, like a board that is unplugged and plugged back in.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { ErrorCodes, QrvendError, isQrvendError } from '../../core/errors.js';
import { openSerialLink } from '../../mdb/transport/index.js';
import { parseScript, parseStep, runStep, type ScriptStep } from './script.js';
import { VmcSimulator, type VendPolicy } from './simulator.js';
import { startPtyRelay, type PtyRelay } from '../../pty/relay.js';

/** The options of `qrvend sim vmc`, as commander hands them over (strings). */
export interface SimVmcOptions {
  pty: string;
  agentPty?: string;
  script?: string;
  baudRate: string;
  pollMs: string;
  auto: string;
  firmware: string;
  boardId: string;
  quiet?: boolean;
}

function usage(message: string): never {
  throw new QrvendError(ErrorCodes.CLI_USAGE, message, { hint: 'run `qrvend sim vmc --help`' });
}

function wholeNumber(text: string, what: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max)
    usage(`${what} must be a whole number ${min}..${max}, got "${text}"`);
  return Number(text);
}

/** The options checked, and the script read and parsed, before anything starts. */
function checkOptions(opts: SimVmcOptions): {
  baudRate: number;
  pollIntervalMs: number;
  scripted: ScriptStep[] | null;
} {
  const baudRate = wholeNumber(opts.baudRate, '--baud-rate', 50, 4_000_000);
  const pollIntervalMs = wholeNumber(opts.pollMs, '--poll-ms', 10, 60_000);
  if (!['manual', 'success', 'fail'].includes(opts.auto))
    usage(`--auto must be manual, success or fail, got "${opts.auto}"`);
  let scripted: ScriptStep[] | null = null;
  if (opts.script !== undefined) {
    let text: string;
    try {
      text = readFileSync(opts.script, 'utf8');
    } catch (err) {
      usage(`cannot read --script ${opts.script}: ${(err as Error).message}`);
    }
    scripted = parseScript(text); // every line checked before the simulator starts
  }
  return { baudRate, pollIntervalMs, scripted };
}

/** Interactive: each stdin line runs as it arrives; a bad line is reported, not fatal. */
async function runStdinLines(sim: VmcSimulator, print: (text: string) => void, closing: () => boolean): Promise<void> {
  const rl = createInterface({ input: process.stdin, terminal: false });
  let lineNo = 0;
  for await (const line of rl) {
    if (closing()) break;
    lineNo += 1;
    try {
      const step = parseStep(line, lineNo);
      if (step === null) continue;
      const out = await runStep(sim, step);
      if (out !== null) print(out);
    } catch (err) {
      process.stderr.write(`${isQrvendError(err) ? err.describe() : String(err)}\n`);
    }
  }
}

export async function runSimVmc(opts: SimVmcOptions): Promise<void> {
  const { baudRate, pollIntervalMs, scripted } = checkOptions(opts);
  const print = (text: string) => process.stdout.write(`${text}\n`);
  let relay: PtyRelay | null = null;
  if (opts.agentPty !== undefined) {
    if (opts.agentPty === opts.pty) usage('--agent-pty and --pty must be two different paths');
    relay = await startPtyRelay(opts.agentPty, opts.pty);
    print(`# pty pair: agent end ${opts.agentPty} (the agent's mdb.port), VMC end ${opts.pty}`);
  }
  const sim = new VmcSimulator({
    pollIntervalMs,
    vendPolicy: opts.auto as VendPolicy,
    firmware: opts.firmware,
    boardId: opts.boardId,
  });
  if (!opts.quiet) {
    sim.on('command', (_cmd, line: string) => print(`< ${line}`));
    sim.on('sent', (line: string) => print(`> ${line}`));
  }

  let closing = false;
  const stopped = new AbortController();
  const connect = async (): Promise<void> => {
    while (!closing) {
      try {
        const link = await openSerialLink({ path: opts.pty, baudRate });
        link.onClose((reason) => {
          if (closing) return;
          print(`# pty closed (${reason}); reopening`);
          setTimeout(() => void connect(), 500);
        });
        sim.attach(link);
        print(`# attached to ${opts.pty}`);
        return;
      } catch (err) {
        print(`# cannot open ${opts.pty} yet (${(err as Error).message}); retrying`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  const stop = async () => {
    closing = true;
    stopped.abort();
    await sim.close();
    await relay?.stop();
  };
  // A signal ends the run like the other commands: the pending step (a wait, a read of stdin) is
  // abandoned, the simulator closed, and the process exits.
  const onSignal = (signal: NodeJS.Signals) => {
    void stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  await connect();

  if (scripted !== null) {
    for (const step of scripted) {
      if (closing) break;
      const out = await runStep(sim, step, stopped.signal);
      if (out !== null) print(out);
    }
    await stop();
    return;
  }

  await runStdinLines(sim, print, () => closing);
  await stop();
}
