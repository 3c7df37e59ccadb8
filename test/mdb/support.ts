/**
 * Shared pieces of the machine loop tests: a test double of the payment worker (it records every
 * MainToPayment message and can answer with PaymentToMain), a wait helper, and the bookkeeping
 * check every run must pass.
 */
import assert from 'node:assert/strict';
import type { MainToPayment } from '../../src/ipc/messages.js';
import type { QrvendConfig } from '../../src/config/schema.js';
import { owedVend, type SimSessionRecord } from '../../src/sim/vmc/index.js';

export function testMdb(over: Partial<QrvendConfig['mdb']> = {}): QrvendConfig['mdb'] {
  return {
    port: 'sim',
    baudRate: 115200,
    device: 'cashless1',
    profile: 'level3-always-idle',
    alwaysIdle: true,
    virtualCredit: null,
    sessionRefreshMs: null,
    multiVend: true,
    cashSale: false,
    boardTimeouts: { idleS: null, messageS: null },
    boardKeys: {},
    resetLoop: { count: 3, windowS: 600 },
    maxResponseTimeS: 60,
    sessionIdleTimeoutMs: 60_000,
    vendResultTimeoutMs: 60_000,
    linkWatchdogMs: 1000,
    reopenMinMs: 50,
    reopenMaxMs: 200,
    maxLineLength: 256,
    ...over,
  };
}

/** Polls `check` until it returns a value (not undefined/false) or the time is up. */
export async function waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Plays the payment worker: records what the machine loop posts. */
export class PaymentDouble {
  readonly messages: MainToPayment[] = [];
  readonly post = (m: MainToPayment): void => {
    this.messages.push(structuredClone(m));
  };

  of<T extends MainToPayment['type']>(type: T): Array<Extract<MainToPayment, { type: T }>> {
    return this.messages.filter((m): m is Extract<MainToPayment, { type: T }> => m.type === type);
  }

  /** Waits for the n-th (1-based) message of a type, counting from the start. */
  nth<T extends MainToPayment['type']>(type: T, n = 1, timeoutMs = 3000): Promise<Extract<MainToPayment, { type: T }>> {
    return waitFor(`${type} #${n}`, () => this.of(type)[n - 1], timeoutMs);
  }

  status(): string | undefined {
    return this.of('reader.status').at(-1)?.status;
  }

  waitStatus(status: string, timeoutMs = 3000): Promise<true> {
    return waitFor(`reader.status ${status}`, () => this.status() === status, timeoutMs);
  }
}

/**
 * Nothing lost, nothing doubled: every approved vend has exactly one vend.result, every started
 * session exactly one session.ended, and what the sessions report as vended is what the VMC says
 * it dispensed in funded sessions.
 */
export function assertBooksBalance(messages: MainToPayment[], vmcRecords?: SimSessionRecord[]): void {
  const results = messages.filter((m) => m.type === 'vend.result') as Array<
    Extract<MainToPayment, { type: 'vend.result' }>
  >;
  for (const a of messages) {
    if (a.type === 'vend.approved') {
      const n = results.filter((r) => r.txId === a.txId && r.vendSeq === a.vendSeq).length;
      assert.equal(n, 1, `vend ${a.txId}#${a.vendSeq} has ${n} results`);
    }
    if (a.type === 'session.started') {
      const n = messages.filter((m) => m.type === 'session.ended' && m.txId === a.txId).length;
      assert.equal(n, 1, `session ${a.txId} ended ${n} times`);
    }
  }
  if (vmcRecords) {
    const round = (x: number) => Math.round(x * 100);
    const vended = (
      messages.filter((m) => m.type === 'session.ended') as Array<Extract<MainToPayment, { type: 'session.ended' }>>
    ).reduce((s, m) => s + round(m.amountVended), 0);
    const dispensed = vmcRecords
      .filter((r) => r.kind === 'funded')
      .flatMap((r) => r.vends)
      .filter(owedVend) // a reset after the approval counts as dispensed (MDB 4.2 7.4.7)
      .reduce((s, v) => s + round(v.approved ?? 0), 0);
    assert.equal(vended, dispensed, 'amount the sessions report = amount the VMC dispensed');
  }
}
