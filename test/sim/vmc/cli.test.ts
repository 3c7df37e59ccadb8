/**
 * `qrvend sim vmc` as a technician runs it: a separate process on the VMC end of a pty pair (made by the test, or by
 * the simulator itself with --agent-pty).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MachineLoop } from '../../../src/mdb/index.js';
import { serialOpener } from '../../../src/mdb/transport/index.js';
import { silentLogger } from '../../../src/core/log.js';
import { createPtyPair } from '../../support/pty.js';
import { PaymentDouble, testMdb, waitFor } from '../../mdb/support.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MAIN = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

function run(args: string[]): {
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  kill: () => void;
  out: () => string;
} {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { done, kill: () => child.kill('SIGKILL'), out: () => stdout };
}

async function scriptedSale(makesPair: boolean): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-simvmc-'));
  const pty = makesPair
    ? { agentPath: join(dir, 'agent'), vmcPath: join(dir, 'vmc'), close: async () => {} }
    : await createPtyPair();
  const script = join(dir, 'sale.txt');
  // Waits give the agent time to configure the board; the assertions only look at outcomes.
  writeFileSync(script, '# one dynamic QR sale\nwait 1000\nselect 12 1.50\nwait 1000\nsuccess\nwait 200\nrecords\n');
  const pay = new PaymentDouble();
  const loop = new MachineLoop({
    mdb: testMdb({ port: pty.agentPath, linkWatchdogMs: 2000 }),
    decimalPlaces: 2,
    currencyNumeric: '978',
    openTransport: serialOpener({ path: pty.agentPath, baudRate: 115200 }),
    post: (m) => {
      pay.post(m);
      if (m.type === 'vend.requested')
        loop.handle({ type: 'vend.approve', requestId: m.requestId, txId: 'D1', amount: m.price });
    },
    log: silentLogger(),
  });
  const proc = run([
    'sim',
    'vmc',
    '--pty',
    pty.vmcPath,
    ...(makesPair ? ['--agent-pty', pty.agentPath] : []),
    '--script',
    script,
    '--poll-ms',
    '50',
  ]);
  try {
    // Start the agent once the VMC end is open, as the script's first wait assumes.
    await waitFor('the simulator attached', () => proc.out().includes('# attached'), 8000);
    loop.start();
    const { code, stdout, stderr } = await proc.done;
    assert.equal(code, 0, stderr);
    assert.match(stdout, /< C,1/);
    assert.match(stdout, /> c,STATUS,VEND,1.50,12/);
    const records = JSON.parse(stdout.trim().split('\n').at(-1)!) as Array<{
      vends: Array<{ outcome: string; approved: number }>;
    }>;
    assert.deepEqual(records[0]?.vends[0], { item: 12, price: 1.5, approved: 1.5, outcome: 'success' });
    await waitFor('vend.result', () => pay.of('vend.result')[0]);
    assert.equal(pay.of('vend.result')[0]?.outcome, 'success');
    if (makesPair)
      assert.equal(existsSync(pty.agentPath) || existsSync(pty.vmcPath), false, 'the pair is gone with the simulator');
  } finally {
    proc.kill();
    await loop.stop();
    await pty.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a scripted VMC sells one item through the agent over a pty', { timeout: TEST_DEADLINE_MS }, () =>
  scriptedSale(false),
);

test(
  'with --agent-pty the simulator makes the pty pair itself (no socat), and removes it on exit',
  { timeout: TEST_DEADLINE_MS },
  () => scriptedSale(true),
);

test(
  'a bad script is refused before anything runs, naming the line (exit 64)',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-simvmc-'));
    const script = join(dir, 'bad.txt');
    writeFileSync(script, 'enable\nselect twelve 1.50\n');
    try {
      const { code, stderr } = await run(['sim', 'vmc', '--pty', join(dir, 'nope'), '--script', script]).done;
      assert.equal(code, 64);
      assert.match(stderr, /CLI_USAGE: script line 2/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
