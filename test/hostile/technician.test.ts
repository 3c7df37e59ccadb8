/**
 * The technician's side under hostile conditions (docs/decisions/hardening.md items 14 and 15): a board spewing
 * out-of-sequence lines must not flood the journal, and `qrvend sim vmc` must end on SIGTERM.
 * (Items 12 and 13 for scripts/qrvend-serial-trace are tested with the trace itself, test/trace/.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRig, type LogLine } from '../../rigs/rig.js';
import { createPtyPair } from '../../src/sim/pty-pair.js';
import { until } from '../../src/sim/wait.js';
import { MAIN_JS, scratchDir } from './support.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

test(
  '14. 2,000 out-of-sequence lines from the board: a handful of ' +
    'journal lines carrying the count; the count stays in the stats',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const rig = await createRig({ config: { log: { statsIntervalMs: 1_000 } } });
    try {
      const agent = await rig.startAgent();
      const refusalLines = () => agent.logs.filter((l: LogLine) => l.msg.startsWith('MDB: input refused'));
      rig.vmc.spew({ kind: 'vend-success' }, 2_000); // c,VEND,SUCCESS with no vend waiting for it
      // All counted in the reader's stats...
      await until(
        () =>
          agent.logs.some(
            (l) => l.msg === 'stats' && Number((l.stats as { reader: { refused: number } }).reader.refused) >= 2_000,
          ),
        20_000,
        'the stats line to count 2,000 refusals',
      );
      // ...and the journal gets the first one at once and one summary with the count when the interval ends.
      await until(
        () => refusalLines().reduce((n, l) => n + 1 + Number(l.repeated ?? 0), 0) >= 2_000,
        20_000,
        'the summary line',
      );
      const lines = refusalLines();
      assert.ok(lines.length <= 3, `${lines.length} journal lines for 2,000 refusals`);
      // Every refusal is accounted for (the reader may refuse a line or two of its own start-up besides).
      const represented = lines.reduce((n, l) => n + 1 + Number(l.repeated ?? 0), 0);
      assert.ok(represented >= 2_000 && represented <= 2_005, `${represented} refusals in the journal lines`);
      assert.ok(lines.some((l) => Number(l.repeated) > 1_000 && l.intervalMs === 10_000));
    } finally {
      await rig.close();
    }
  },
);

test('15. `qrvend sim vmc` ends on SIGTERM while its script waits', { timeout: TEST_DEADLINE_MS }, async () => {
  const scratch = scratchDir('qrvend-simvmc-');
  const pty = await createPtyPair();
  try {
    const script = join(scratch.dir, 'script');
    writeFileSync(script, 'enable\nwait 600000\nend\n');
    const child = spawn(
      process.execPath,
      [MAIN_JS, 'sim', 'vmc', '--pty', pty.vmcPath, '--script', script, '--quiet'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('close', (code, signal) => resolve({ code, signal })),
    );
    try {
      await until(() => out.includes('# attached to'), 10_000, 'the simulator to attach');
      child.kill('SIGTERM');
      const end = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), 10_000))]);
      assert.ok(end !== null, 'exited on SIGTERM instead of waiting out its script');
      assert.ok(end.code === 143 || end.signal === 'SIGTERM', JSON.stringify(end));
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
  } finally {
    await pty.close();
    scratch.cleanup();
  }
});
