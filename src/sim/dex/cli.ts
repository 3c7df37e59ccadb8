/** `qrvend sim dex`: the simulated VMC's DEX jack on a pty, until interrupted. */
import { readFileSync } from 'node:fs';
import { ErrorCodes, QrvendError } from '../../core/errors.js';
import { escapeForTerminal } from '../../core/terminal-text.js';
import { startPtyRelay, type PtyRelay } from '../../pty/relay.js';
import { DEX_BEHAVIOURS, startDexSim, type DexBehaviour } from './vmc.js';

export interface SimDexOptions {
  pty: string;
  agentPty?: string;
  protocol: string;
  behaviour: string;
}

const usage = (message: string): never => {
  throw new QrvendError(ErrorCodes.CLI_USAGE, message);
};

export async function runSimDex(files: string[], opts: SimDexOptions): Promise<void> {
  if (opts.protocol !== 'dex-ucs' && opts.protocol !== 'ddcmp') usage('--protocol must be dex-ucs or ddcmp');
  if (!(DEX_BEHAVIOURS as readonly string[]).includes(opts.behaviour))
    usage(`--behaviour must be one of ${DEX_BEHAVIOURS.join(', ')}`);
  if (files.length === 0) usage('give at least one audit file to serve');
  const contents = files.map((f) => {
    try {
      return readFileSync(f);
    } catch (err) {
      return usage(`cannot read ${escapeForTerminal(f)}: ${(err as Error).message}`);
    }
  });
  const print = (text: string) => process.stdout.write(`${text}\n`);
  let relay: PtyRelay | null = null;
  if (opts.agentPty !== undefined) {
    if (opts.agentPty === opts.pty) usage('--agent-pty and --pty must be two different paths');
    relay = await startPtyRelay(opts.agentPty, opts.pty);
    print(
      `# pty pair: agent end ${escapeForTerminal(opts.agentPty)} (the ` +
        `agent's dex.port), VMC end ${escapeForTerminal(opts.pty)}`,
    );
  }
  const sim = await startDexSim({
    path: opts.pty,
    protocol: opts.protocol as 'dex-ucs' | 'ddcmp',
    files: contents,
    behaviour: opts.behaviour as DexBehaviour,
  });
  print(`# DEX VMC (${opts.protocol}, ${opts.behaviour}) serving ${files.length} file(s); Ctrl-C to stop`);
  let last = 0;
  const ticker = setInterval(() => {
    if (sim.served !== last) print(`# read ${(last = sim.served)} served`);
  }, 250);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(ticker);
  await sim.close();
  await relay?.stop();
}
