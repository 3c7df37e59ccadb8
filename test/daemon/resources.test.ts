/**
 * The daemon's resource settings: the machine loop's thread priority (per thread, fail soft), the
 * heap caps of the main thread (launcher flags) and of the payment worker (resourceLimits), and
 * the per-thread memory the stats line reports.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { MAIN_THREAD_NICE } from '../../src/daemon/thread-priority.js';
import { MAIN_THREAD_NODE_FLAGS, PAYMENT_WORKER_LIMITS } from '../../src/daemon/heap-limits.js';

const T = { timeout: 20_000 };
const WRAPPER = fileURLToPath(new URL('../../../packaging/qrvend-wrapper.sh', import.meta.url));
const PRIORITY_JS = new URL('../../src/daemon/thread-priority.js', import.meta.url).href;
const HEAP_JS = new URL('../../src/daemon/heap-limits.js', import.meta.url).href;

/** Runs `body` (an async function's source, given `mod`) in a worker thread and returns its result. */
function inWorker<T>(moduleUrl: string, body: string, options: ConstructorParameters<typeof Worker>[1] = {}): Promise<T> {
  const source = `
    import { parentPort } from 'node:worker_threads';
    import os from 'node:os';
    const mod = await import(${JSON.stringify(moduleUrl)});
    const lines = [];
    const log = { info: (o, m) => lines.push({ ...o, msg: m }) };
    parentPort.postMessage(await (${body})(mod, log, lines));
  `;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(source)}`), options);
  return new Promise((resolve, reject) => {
    worker.once('message', (m: T) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

test('raising the priority changes the calling thread only, or fails soft with one log line', T, async () => {
  const mainBefore = os.getPriority(0);
  const r = await inWorker<{ result: { raised: boolean; nice: number; reason?: string }; after: number; lines: Array<Record<string, unknown>> }>(
    PRIORITY_JS,
    `async (mod, log, lines) => { const result = mod.raiseThisThread(log); return { result, after: os.getPriority(0), lines }; }`,
  );
  assert.equal(r.lines.length, 1, 'exactly one log line');
  if (r.result.raised) {
    assert.equal(r.after, MAIN_THREAD_NICE);
    assert.match(String(r.lines[0]!.msg), /raised/);
  } else {
    // Without CAP_SYS_NICE or an RLIMIT_NICE allowing it, setpriority refuses: the daemon carries on.
    assert.match(String(r.result.reason), /EACCES|EPERM/);
    assert.equal(r.after, r.result.nice, 'priority unchanged');
    assert.match(String(r.lines[0]!.msg), /LimitNICE/);
  }
  assert.equal(os.getPriority(0), mainBefore, 'the thread that started the worker kept its priority');
});

test('a thread already at or above the wanted priority is left alone (never lowered)', T, async () => {
  const r = await inWorker<{ result: { raised: boolean; nice: number }; before: number; after: number; lines: unknown[] }>(
    PRIORITY_JS,
    `async (mod, log, lines) => { const before = os.getPriority(0); const result = mod.raiseThisThread(log, 19); return { result, before, after: os.getPriority(0), lines }; }`,
  );
  assert.equal(r.after, r.before);
  assert.deepEqual(r.result, { raised: true, nice: r.before });
  assert.deepEqual(r.lines, []);
});

test("the launcher's flags for `qrvend run` are the ones the code documents, and they cap the main heap", T, () => {
  const wrapper = readFileSync(WRAPPER, 'utf8');
  const line = /^QRVEND_RUN_NODE_FLAGS="([^"]*)"$/m.exec(wrapper)?.[1];
  assert.equal(line, MAIN_THREAD_NODE_FLAGS.join(' '));
  const probe = `import(${JSON.stringify(HEAP_JS)}).then((m) => console.log(JSON.stringify(m.heapLimitReport())))`;
  const capped = JSON.parse(execFileSync(process.execPath, [...MAIN_THREAD_NODE_FLAGS, '-e', probe], { encoding: 'utf8' })) as { heapLimitMb: number; limited: boolean };
  const uncapped = JSON.parse(execFileSync(process.execPath, ['--max-old-space-size=512', '-e', probe], { encoding: 'utf8' })) as { heapLimitMb: number; limited: boolean };
  assert.equal(capped.limited, true, JSON.stringify(capped));
  assert.equal(uncapped.limited, false, JSON.stringify(uncapped));
});

test("the payment worker's resource limits cap its heap, and threadMemory reports that thread's heap", T, async () => {
  const r = await inWorker<{ limitMb: number; memory: { heapUsedBytes: number; heapTotalBytes: number; externalBytes: number } }>(
    HEAP_JS,
    `async (mod) => { const v8 = await import('node:v8'); return { limitMb: v8.getHeapStatistics().heap_size_limit / 2 ** 20, memory: mod.threadMemory() }; }`,
    { resourceLimits: PAYMENT_WORKER_LIMITS },
  );
  const expected = PAYMENT_WORKER_LIMITS.maxOldGenerationSizeMb! + PAYMENT_WORKER_LIMITS.maxYoungGenerationSizeMb!;
  assert.ok(Math.abs(r.limitMb - expected) <= 4, `heap limit ${r.limitMb} MB, expected about ${expected} MB`);
  assert.ok(r.memory.heapUsedBytes > 0 && r.memory.heapUsedBytes <= r.memory.heapTotalBytes, JSON.stringify(r.memory));
  assert.ok(r.memory.externalBytes >= 0);
});

test('the stats line shows each thread: main and payment heaps, the main heap limit, the thread priority', { timeout: 40_000 }, async () => {
  const { createRig } = await import('../../src/sim/rig.js');
  const rig = await createRig({ config: { log: { statsIntervalMs: 500 } } });
  try {
    const agent = await rig.startAgent();
    // The payment worker reports its heap with its health message, every 5 s.
    const line = await agent.waitForLog((l) => {
      const memory = (l.stats as { memory?: { payment?: unknown } } | undefined)?.memory;
      return l.msg === 'stats' && memory?.payment != null;
    }, 20_000, 'a stats line with the payment worker heap');
    const stats = line.stats as { memory: { main: Record<string, number>; payment: Record<string, number>; mainHeapLimitMb: number }; mainThreadNice: number; rssBytes: number };
    for (const thread of [stats.memory.main, stats.memory.payment]) {
      assert.ok(thread.heapUsedBytes! > 0 && thread.heapUsedBytes! <= thread.heapTotalBytes!, JSON.stringify(thread));
    }
    assert.notDeepEqual(stats.memory.main, stats.memory.payment, 'two isolates, two heaps');
    assert.ok(stats.memory.mainHeapLimitMb > 0);
    assert.equal(typeof stats.mainThreadNice, 'number');
    assert.ok(stats.rssBytes > stats.memory.main.heapUsedBytes! + stats.memory.payment.heapUsedBytes!);
  } finally {
    await rig.close();
  }
});
