/**
 * The end-to-end bench: the rig of rigs/rig.ts (the real `qrvend run` process, the VMC
 * simulator on a pty pair, the gateway simulator on loopback) with the recording proxy between
 * the daemon and the gateway, plus the waits and checks every e2e file uses.
 */
import assert from 'node:assert/strict';
import { createRig, until, type LogLine, type Rig, type RigOptions } from '../../../rigs/rig.js';
import { checkSales } from '../../../src/sim/checker.js';
import type { TxRecord } from '../../../src/sim/gateway/index.js';
import type { BoardCommand } from '../../../src/mdb/codec/index.js';
import type { ReaderStatus } from '../../../src/ipc/messages.js';
import { isUsable } from '../../../src/flows/reader-screen.js';
import { startRecordingProxy, type RecordingProxy } from './recording-proxy.js';

export { until };

export interface Bench {
  rig: Rig;
  proxy: RecordingProxy;
  close(): Promise<void>;
}

/** Starts the proxy, the rig (daemon pointed at the proxy) and the daemon. */
export async function createBench(options: RigOptions = {}): Promise<Bench> {
  const proxy = await startRecordingProxy();
  const config = { ...(options.config as Record<string, any> | undefined) };
  config.gateway = { ...(config.gateway ?? {}), baseUrl: proxy.url };
  let rig: Rig;
  try {
    rig = await createRig({ ...options, config });
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

export function tx(rig: Rig, txId: string): TxRecord | undefined {
  return rig.gateway.ledger().transactions[txId];
}

/** Waits until the simulator's record of txId satisfies `check`, and returns it. */
export async function waitTx(
  rig: Rig,
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
  rig: Rig,
  mark: number,
  match: (l: LogLine) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<LogLine> {
  const agent = rig.agent!;
  return agent.waitForLog((l) => agent.logs.indexOf(l) >= mark && match(l), timeoutMs, what);
}

export function logMark(rig: Rig): number {
  return rig.agent!.logs.length;
}

/** The host's answer to a pending vend request (C,VEND,<amount> or C,VEND,-1). */
export function nextVendAnswer(rig: Rig, timeoutMs = 10_000): Promise<BoardCommand> {
  return rig.nextCommand(
    (c) => c.kind === 'vend-approve' || c.kind === 'vend-deny',
    timeoutMs,
    'the vend answer (C,VEND,...)',
  );
}

/** Every request the daemon sent passed the simulator's strict validation, and nothing was closed twice. */
export function assertLedgerClean(rig: Rig): void {
  const view = rig.gateway.ledger();
  assert.deepEqual(view.rejected, [], 'the gateway simulator rejected requests');
  assert.equal(view.summary.rejected, 0);
  assert.deepEqual(view.summary.closedMoreThanOnce, []);
  assert.equal(view.summary.conflicts, 0, 'conflicting closing operations');
}

/** VMC and gateway agree: every dispensed vend charged exactly once, nothing charged that was not dispensed. */
export function assertSalesBalance(rig: Rig, options: { virtualCredit?: number } = {}): void {
  const check = checkSales(rig.vmc.records(), rig.gateway.ledger(), options);
  assert.ok(check.ok, JSON.stringify(check));
}

/** The VMC has no session or vend open (the previous test ended cleanly). */
export async function vmcIdle(rig: Rig, timeoutMs = 10_000): Promise<void> {
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
function paymentSideSeesReaderUsable(rig: Rig): boolean {
  const logs = rig.agent?.logs ?? [];
  for (let i = logs.length - 1; i >= 0; i--) {
    const l = logs[i]!;
    if (l.msg === 'reader availability changed') return isUsable(l.status as ReaderStatus);
  }
  return true;
}

/** The last VMC session record (the one a test just drove). */
export function lastSession(rig: Rig) {
  const records = rig.vmc.records();
  return records[records.length - 1]!;
}

/** The transaction ids the simulator has recorded, to find the one a vend request creates. */
export function knownTxIds(rig: Rig): Set<string> {
  return new Set(Object.keys(rig.gateway.ledger().transactions));
}

export async function newTxId(rig: Rig, known: Set<string>, what: string, timeoutMs = 10_000): Promise<string> {
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
export async function setReaderEnabled(rig: Rig, enabled: boolean): Promise<void> {
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
