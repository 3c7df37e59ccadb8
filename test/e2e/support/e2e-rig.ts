/**
 * The end-to-end bench: a daemon between the simulators with the recording proxy between it and
 * the gateway, plus the waits and checks every e2e file uses. Two ways to run the daemon:
 * - createInProcessBench: the real daemon wiring in this process on the in-memory wire
 *   (rigs/in-process-rig.ts), for the money and flow tests;
 * - createBench: the real `qrvend run` process over a pty pair (rigs/rig.ts), for what only a
 *   process shows: signals, a SIGKILL at a chosen moment, the pty, exit codes.
 */
import assert from 'node:assert/strict';
import { createRig, until, type AgentRig, type LogLine, type Rig, type RigOptions } from '../../../rigs/rig.js';
import { createInProcessRig, type InProcessRig } from '../../../rigs/in-process-rig.js';
import type { RigOptionsBase } from '../../../rigs/rig-parts.js';
import { checkSales } from '../../../src/sim/checker.js';
import type { TxRecord } from '../../../src/sim/gateway/index.js';
import type { BoardCommand } from '../../../src/mdb/codec/index.js';
import type { ReaderStatus } from '../../../src/ipc/messages.js';
import { isUsable } from '../../../src/flows/reader-screen.js';
import { startRecordingProxy, type Exchange, type RecordingProxy } from './recording-proxy.js';

export { until };

export interface Bench<R extends AgentRig = Rig> {
  rig: R;
  proxy: RecordingProxy;
  close(): Promise<void>;
}

/** Starts the proxy, the rig `make` builds (daemon pointed at the proxy) and the daemon. */
async function startBench<R extends AgentRig, O extends RigOptionsBase>(
  options: O,
  make: (options: O) => Promise<R>,
): Promise<Bench<R>> {
  const proxy = await startRecordingProxy();
  const config = { ...(options.config as Record<string, any> | undefined) };
  config.gateway = { ...(config.gateway ?? {}), baseUrl: proxy.url };
  let rig: R;
  try {
    rig = await make({ ...options, config });
  } catch (err) {
    await proxy.close();
    throw err;
  }
  proxy.setUpstream(rig.gateway.url);
  try {
    await rig.startAgent();
  } catch (err) {
    await rig.close();
    await proxy.close();
    throw err;
  }
  return {
    rig,
    proxy,
    async close() {
      await rig.close();
      await proxy.close();
    },
  };
}

/** The `qrvend run` process over a pty pair (rigs/rig.ts). */
export function createBench(options: RigOptions = {}): Promise<Bench<Rig>> {
  return startBench(options, createRig);
}

/** The daemon wiring in this process on the in-memory wire (rigs/in-process-rig.ts). */
export function createInProcessBench(options: RigOptionsBase = {}): Promise<Bench<InProcessRig>> {
  return startBench(options, createInProcessRig);
}

export function tx(rig: AgentRig, txId: string): TxRecord | undefined {
  return rig.gateway.ledger().transactions[txId];
}

/** Waits until the simulator's record of txId satisfies `check`, and returns it. */
export async function waitTx(
  rig: AgentRig,
  txId: string,
  check: (t: TxRecord) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<TxRecord> {
  await until(
    () => {
      const t = tx(rig, txId);
      return t !== undefined && check(t);
    },
    timeoutMs,
    `${what} (transaction ${txId})`,
  );
  return tx(rig, txId)!;
}

/** A log line of the daemon that comes after `mark` (an index into its logs). */
export function waitLogAfter(
  rig: AgentRig,
  mark: number,
  match: (l: LogLine) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<LogLine> {
  const agent = rig.agent!;
  return agent.waitForLog((l) => agent.logs.indexOf(l) >= mark && match(l), timeoutMs, what);
}

export function logMark(rig: AgentRig): number {
  return rig.agent!.logs.length;
}

/**
 * Until the wall clock reads a later second than when `sent` reached the proxy, so that a body the
 * daemon stamps from now on carries another MachineAuTime (whole seconds) than `sent` did: a
 * condition on the clock the daemon reads, not a fixed wait.
 */
export async function pastSecondOf(sent: Exchange): Promise<void> {
  const second = Math.floor(sent.receivedAtMs / 1000);
  await until(() => Math.floor(Date.now() / 1000) > second, 5_000, 'the clock to pass the second of the request', 10);
}

/** The host's answer to a pending vend request (C,VEND,<amount> or C,VEND,-1). */
export function nextVendAnswer(rig: AgentRig, timeoutMs = 10_000): Promise<BoardCommand> {
  return rig.nextCommand(
    (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny',
    timeoutMs,
    'the vend answer (C,VEND,...)',
  );
}

/** Every request the daemon sent passed the simulator's strict validation, and nothing was closed twice. */
export function assertLedgerClean(rig: AgentRig): void {
  const view = rig.gateway.ledger();
  assert.deepEqual(view.rejected, [], 'the gateway simulator rejected requests');
  assert.equal(view.summary.rejected, 0);
  assert.deepEqual(view.summary.closedMoreThanOnce, []);
  assert.equal(view.summary.conflicts, 0, 'conflicting closing operations');
}

/** VMC and gateway agree: every dispensed vend charged exactly once, nothing charged that was not dispensed. */
export function assertSalesBalance(rig: AgentRig, options: { virtualCredit?: number } = {}): void {
  const check = checkSales(rig.vmc.records(), rig.gateway.ledger(), options);
  assert.ok(check.ok, JSON.stringify(check));
}

/** The VMC has no session or vend open (the previous test ended cleanly). */
export async function vmcIdle(rig: AgentRig, timeoutMs = 10_000): Promise<void> {
  await until(
    () => {
      const s = rig.vmc.state();
      return s.reader === 'enabled' && !s.session && s.vend === 'none' && paymentSideSeesReaderUsable(rig);
    },
    timeoutMs,
    'the VMC to be idle with the reader enabled, and the daemon to see it usable',
  );
}

/**
 * Whether the daemon's payment side, which answers Starts, last saw the reader usable. The VMC can
 * be idle again while the daemon's view still lags (a board link restarted on a loaded machine):
 * a Start sent then is declined 30 "reader not enabled". The payment side logs every change of
 * usability, so its last such line is its view; no line since the start means the reader it
 * waited for at start.
 */
function paymentSideSeesReaderUsable(rig: AgentRig): boolean {
  const logs = rig.agent?.logs ?? [];
  for (let i = logs.length - 1; i >= 0; i--) {
    const l = logs[i]!;
    if (l.msg === 'reader availability changed') return isUsable(l.status as ReaderStatus);
  }
  return true;
}

/** The last VMC session record (the one a test just drove). */
export function lastSession(rig: AgentRig) {
  const records = rig.vmc.records();
  return records[records.length - 1]!;
}

/** The transaction ids the simulator has recorded, to find the one a vend request creates. */
export function knownTxIds(rig: AgentRig): Set<string> {
  return new Set(Object.keys(rig.gateway.ledger().transactions));
}

export async function newTxId(rig: AgentRig, known: Set<string>, what: string, timeoutMs = 10_000): Promise<string> {
  let found: string | undefined;
  await until(
    () => {
      found = Object.keys(rig.gateway.ledger().transactions).find((id) => !known.has(id));
      return found !== undefined;
    },
    timeoutMs,
    what,
  );
  return found!;
}

/** The VMC disables (or enables) the reader; resolves once the daemon's payment side has seen it. */
export async function setReaderEnabled(rig: AgentRig, enabled: boolean): Promise<void> {
  const mark = logMark(rig);
  assert.ok(
    enabled ? rig.vmc.enable() : rig.vmc.disable(),
    `the VMC could not ${enabled ? 'enable' : 'disable'} the reader`,
  );
  await waitLogAfter(
    rig,
    mark,
    (l) => l.msg === 'reader availability changed' && l.status === (enabled ? 'enabled' : 'disabled'),
    `the daemon to see the reader ${enabled ? 'enabled' : 'disabled'}`,
  );
}
