/**
 * End to end: what the journal says when the gateway stops answering and comes back (docs/decisions/smallest-boards.md
 * item 6). The real daemon, the gateway simulator resetting every call: one warn line naming the
 * reason; the outbox's retries (debug) add no more; once the simulator answers, one info line.
 */
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createInProcessBench, logMark, until, waitLogAfter, type Bench } from './support/e2e-rig.js';
import type { InProcessRig } from '../../rigs/in-process-rig.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

let bench: Bench<InProcessRig>;
before(async () => {
  bench = await createInProcessBench({
    config: { gateway: { timeoutMs: 1000 }, log: { level: 'info', statsIntervalMs: 0 } },
  });
});
after(async () => bench?.close());

test(
  'gateway unreachable: one warn line with the reason; back: one info line',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const { rig } = bench;
    const mark = logMark(rig);
    rig.gateway.setFaults([{ kind: 'reset-before', rate: 1 }]);
    // A Start whose Authorization gets no answer: the flow cancels, and the Cancel waits in the outbox.
    await rig.start();
    const down = await waitLogAfter(
      rig,
      mark,
      (l) => l.msg.startsWith('gateway unreachable'),
      'the gateway unreachable line',
    );
    assert.equal(down.level, 'warn');
    assert.equal(down.code, 'GATEWAY_UNREACHABLE');
    assert.match(String(down.reason), /^reset: /);
    // Retries go on failing (the simulator counts the calls it reset) without another line.
    const seen = rig.agent!.logs.length;
    await until(
      () => (rig.gateway.ledger().summary.faults['reset-before'] ?? 0) >= 4,
      15_000,
      'the outbox to retry a few times',
    );
    assert.equal(
      rig.agent!.logs.slice(seen).filter((l) => String(l.msg).startsWith('gateway unreachable')).length,
      0,
      'a line per retry',
    );
    rig.gateway.setFaults([]);
    const back = await waitLogAfter(
      rig,
      mark,
      (l) => l.msg === 'gateway reachable again',
      'the gateway reachable line',
    );
    assert.equal(back.level, 'info');
    assert.ok(Number(back.failedCalls) >= 4, JSON.stringify(back));
  },
);
