/**
 * Parent side of the broker process (broker-process.ts): start it, stall its gate, run the operator's traffic, stop it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopForkedChild } from './child-stop.js';
import type { GateMode } from '../../rigs/broker/index.js';

const REPLY_TIMEOUT_MS = 10_000;

export interface TrafficCounts {
  sent: number;
  answered: number;
  refused: number;
}

export class BrokerProcess {
  private constructor(
    private readonly child: ChildProcess,
    /** The broker itself (what an operator connects to). */
    readonly brokerUrl: string,
    /** The gate in front of it (what the daemon connects to). */
    readonly gateUrl: string,
    /** The operator's public key as a trust file: the daemon's fleet.trustFile. */
    readonly trustFile: string,
  ) {}

  static async start(): Promise<BrokerProcess> {
    const child = fork(fileURLToPath(new URL('./broker-process.js', import.meta.url)), [], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    try {
      const ready = await reply<{ brokerUrl: string; gateUrl: string; trustFile: string }>(child, 'ready', null);
      return new BrokerProcess(child, ready.brokerUrl, ready.gateUrl, ready.trustFile);
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  async setMode(mode: GateMode): Promise<void> {
    await reply(this.child, 'mode.set', { type: 'mode', mode });
  }

  async startTraffic(prefix: string, machineId: string, perSecond: number): Promise<void> {
    await reply(this.child, 'traffic.started', { type: 'traffic.start', prefix, machineId, perSecond });
  }

  async stopTraffic(): Promise<TrafficCounts> {
    return (await reply<{ counts: TrafficCounts }>(this.child, 'traffic.stopped', { type: 'traffic.stop' })).counts;
  }

  stop(): Promise<void> {
    return stopForkedChild(this.child);
  }
}

/** Sends `message` (unless null) and waits for the child's message of type `wanted`. */
function reply<T>(child: ChildProcess, wanted: string, message: object | null): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, value?: T) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(value!);
    };
    const onMessage = (m: { type: string; message?: string }) => {
      if (m.type === wanted) done(null, m as T);
      else if (m.type === 'traffic.failed')
        done(new Error(`the operator's command traffic did not start: ${m.message}`));
    };
    const onExit = (code: number | null) => done(new Error(`the broker process exited (${code}) before its ${wanted}`));
    const timer = setTimeout(
      () => done(new Error(`no ${wanted} from the broker process within ${REPLY_TIMEOUT_MS / 1000} s`)),
      REPLY_TIMEOUT_MS,
    );
    child.on('message', onMessage);
    child.once('exit', onExit);
    if (message !== null) child.send(message);
  });
}
