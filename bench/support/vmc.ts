/**
 * The VMC side of the pty for the end-to-end figures: the VMC simulator behind its adapter board,
 * driven one vend at a time. A vend's latency runs from just before the request line
 * (`c,STATUS,VEND,<amount>,<item>`) is written to the pty until the approval line (`C,VEND,<amount>`)
 * has been read back and parsed on this side.
 */
import { performance } from 'node:perf_hooks';
import type { BoardCommand } from '../../src/mdb/codec/index.js';
import { VmcSimulator } from '../../src/sim/vmc/index.js';
import { sendStart } from '../../src/sim/wallet/index.js';
import { Budget, sleep } from './budget.js';
import type { DaemonFiles } from './daemon.js';
import { openTtyLink } from './tty-link.js';

export async function attachVmc(vmcPath: string): Promise<VmcSimulator> {
  const link = openTtyLink(vmcPath);
  return new VmcSimulator({
    link,
    vendPolicy: 'manual',
    autoEnable: true,
    pollIntervalMs: 100,
    seed: 1,
    keepCommands: 100,
  });
}

/** Resolves with the first host command matching `match` (and when it arrived), or rejects after `timeoutMs`. */
export function nextCommand(
  sim: VmcSimulator,
  match: (c: BoardCommand) => boolean,
  timeoutMs: number,
  what: string,
): Promise<{ command: BoardCommand; atMs: number }> {
  return new Promise((resolve, reject) => {
    const onCommand = (command: BoardCommand) => {
      if (!match(command)) return;
      const atMs = performance.now();
      clearTimeout(timer);
      sim.off('command', onCommand);
      resolve({ command, atMs });
    };
    const timer = setTimeout(() => {
      sim.off('command', onCommand);
      reject(new Error(`no ${what} from the daemon within ${timeoutMs} ms`));
    }, timeoutMs);
    sim.on('command', onCommand);
  });
}

/**
 * A static QR session: the wallet simulator sends Start, the daemon authorizes at the gateway and
 * begins the MDB session (`C,START,<funds>`). A Start refused because the previous session is still
 * closing is sent again. Returns the funds.
 */
export async function openStaticSession(sim: VmcSimulator, files: DaemonFiles, timeoutMs: number): Promise<number> {
  const until = performance.now() + timeoutMs;
  // One listener for the whole attempt: whichever Start gets through, its session begins with C,START.
  const started = nextCommand(sim, (c) => c.kind === 'start', timeoutMs, 'C,START');
  started.catch(() => {});
  let last = '';
  while (performance.now() < until) {
    const result = await sendStart({
      url: files.startUrl,
      integratorName: files.integratorName,
      secretToken: files.secretToken,
      uniQr: files.uniQr,
      timeoutMs: 10_000,
    });
    if (result.outcome.kind === 'approved') {
      const { command } = await started;
      return command.kind === 'start' ? command.funds : 0;
    }
    last =
      result.outcome.kind === 'declined'
        ? `declined ${result.outcome.code}: ${result.outcome.message ?? ''}`
        : `${result.outcome.failure}: ${result.outcome.detail}`;
    await sleep(20);
  }
  throw new Error(`no static QR session opened within ${timeoutMs} ms (last Start answer: ${last})`);
}

/** One vend inside the open session: request, approval (timed), then the product comes out. */
export async function vendOnce(sim: VmcSimulator, item: number, price: number, timeoutMs = 5000): Promise<number> {
  const answer = nextCommand(
    sim,
    (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny',
    timeoutMs,
    'answer to a vend request',
  );
  const t0 = performance.now();
  if (!sim.select(item, price)) {
    answer.catch(() => {});
    throw new Error(`the VMC simulator could not request a vend (state ${JSON.stringify(sim.state())})`);
  }
  const { command, atMs } = await answer;
  if (command.kind !== 'vend-approve') throw new Error(`vend of ${price} denied inside a session`);
  const latency = atMs - t0;
  sim.vendSuccess();
  return latency;
}

export interface VendRun {
  latencies: number[];
  /** Set when the budget ran out before `count` vends. */
  stoppedByBudget: boolean;
}

/** `count` vends back to back, `gapMs` apart (0 = as fast as the daemon answers). */
export async function runVends(
  sim: VmcSimulator,
  count: number,
  o: { price: number; gapMs: number; budget: Budget },
): Promise<VendRun> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    if (o.budget.spent) return { latencies, stoppedByBudget: true };
    latencies.push(await vendOnce(sim, 1 + (i % 60), o.price));
    if (o.gapMs > 0) await sleep(o.gapMs);
    else await new Promise((r) => setImmediate(r));
  }
  return { latencies, stoppedByBudget: false };
}

/** The VMC ends the session (session complete); the daemon then settles it. */
export function endSession(sim: VmcSimulator): void {
  if (!sim.endSession())
    throw new Error(`the VMC simulator could not end the session (state ${JSON.stringify(sim.state())})`);
}
