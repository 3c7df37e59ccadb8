/**
 * Driving a Static QR session from the outside, as a wallet and a consumer at the machine would:
 * a Start, the session the daemon opens on the VMC, selections and their local answers.
 */
import assert from 'node:assert/strict';
import type { AgentRig } from '../../../rigs/rig.js';
import type { BoardCommand } from '../../../src/mdb/codec/index.js';
import { nextVendAnswer } from './e2e-rig.js';

export interface OpenedSession {
  txId: string;
  /** The funds of C,START,<funds>. */
  funds: number;
}

/** A Start that is approved and opens an MDB session (C,START seen by the VMC). */
export async function openSession(rig: AgentRig, options: { balance?: number } = {}): Promise<OpenedSession> {
  const opened = rig.nextCommand((c) => c.kind === 'start', 10_000, 'C,START');
  opened.catch(() => {}); // awaited below only when the Start was approved
  const start = await rig.start(options);
  assert.equal(start.outcome.kind, 'approved', `Start: ${JSON.stringify(start.outcome)}`);
  const cmd = (await opened) as Extract<BoardCommand, { kind: 'start' }>;
  return { txId: start.transactionId, funds: cmd.funds };
}

/** The consumer selects an item; resolves with the reader's answer (approve with amount, or deny). */
export async function select(rig: AgentRig, item: number, price: number): Promise<BoardCommand> {
  const answer = nextVendAnswer(rig);
  assert.ok(rig.vmc.select(item, price), `the VMC could not select item ${item} (no session, or a vend pending)`);
  return answer;
}

/** Select, expect approval of exactly the price, then dispense (or fail to). */
export async function buy(
  rig: AgentRig,
  item: number,
  price: number,
  result: 'success' | 'failure' = 'success',
): Promise<void> {
  assert.deepEqual(await select(rig, item, price), { kind: 'vend-approve', amount: price });
  assert.ok(result === 'success' ? rig.vmc.vendSuccess() : rig.vmc.vendFailure(3));
}
