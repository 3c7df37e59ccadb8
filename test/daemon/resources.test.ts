/**
 * The daemon's resource settings: the machine loop's thread priority (per thread, fail soft), the
 * heap caps of the main thread (launcher flags) and of the payment worker (resourceLimits), and
 * the per-thread memory the stats line reports.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { MAIN_THREAD_NICE } from '../../src/daemon/thread-priority.js';
import { constants, PerformanceObserver, performance } from 'node:perf_hooks';
import {
  compactingCollection,
  MAIN_THREAD_NODE_FLAGS,
  PAYMENT_WORKER_LIMITS,
  quietCollector,
} from '../../src/daemon/heap-limits.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const WRAPPER = fileURLToPath(new URL('../../../packaging/qrvend-wrapper.sh', import.meta.url));
const PRIORITY_JS = new URL('../../src/daemon/thread-priority.js', import.meta.url).href;
const HEAP_JS = new URL('../../src/daemon/heap-limits.js', import.meta.url).href;

/** Runs `body` (an async function's source, given `mod`) in a worker thread and returns its result. */
function inWorker<T>(
  moduleUrl: string,
  body: string,
  options: ConstructorParameters<typeof Worker>[1] = {},
): Promise<T> {
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
  const r = await inWorker<{
    result: { raised: boolean; nice: number; reason?: string };
    after: number;
    lines: Array<Record<string, unknown>>;
  }>(
    PRIORITY_JS,
    `async (mod, log, lines) => { const result = mod.raiseThisThread(log); ` +
      `return { result, after: os.getPriority(0), lines }; }`,
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
  const r = await inWorker<{
    result: { raised: boolean; nice: number };
    before: number;
    after: number;
    lines: unknown[];
  }>(
    PRIORITY_JS,
    `async (mod, log, lines) => { const before = os.getPriority(0); const result = ` +
      `mod.raiseThisThread(log, 19); return { result, before, after: os.getPriority(0), lines }; }`,
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
  const capped = JSON.parse(
    execFileSync(process.execPath, [...MAIN_THREAD_NODE_FLAGS, '-e', probe], { encoding: 'utf8' }),
  ) as { heapLimitMb: number; limited: boolean };
  const uncapped = JSON.parse(
    execFileSync(process.execPath, ['--max-old-space-size=512', '-e', probe], { encoding: 'utf8' }),
  ) as { heapLimitMb: number; limited: boolean };
  assert.equal(capped.limited, true, JSON.stringify(capped));
  assert.equal(uncapped.limited, false, JSON.stringify(uncapped));
});

test("the payment worker's resource limits cap its heap, and threadMemory reports that thread's heap", T, async () => {
  const r = await inWorker<{
    limitMb: number;
    memory: { heapUsedBytes: number; heapTotalBytes: number; externalBytes: number };
  }>(
    HEAP_JS,
    `async (mod) => { const v8 = await import('node:v8'); return { limitMb: ` +
      `v8.getHeapStatistics().heap_size_limit / 2 ** 20, memory: mod.threadMemory() }; }`,
    { resourceLimits: PAYMENT_WORKER_LIMITS },
  );
  const expected = PAYMENT_WORKER_LIMITS.maxOldGenerationSizeMb! + PAYMENT_WORKER_LIMITS.maxYoungGenerationSizeMb!;
  assert.ok(Math.abs(r.limitMb - expected) <= 4, `heap limit ${r.limitMb} MB, expected about ${expected} MB`);
  assert.ok(r.memory.heapUsedBytes > 0 && r.memory.heapUsedBytes <= r.memory.heapTotalBytes, JSON.stringify(r.memory));
  assert.ok(r.memory.externalBytes >= 0);
});

test("the main thread's collection waits until the thread has been quiet, then runs once", T, async () => {
  const forced: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const detail = (e as unknown as { detail?: { kind: number; flags: number } }).detail;
      if (
        detail &&
        detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR &&
        (detail.flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0
      )
        forced.push(e.startTime);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const quietMs = 150;
  // The heap's committed size as the collector sees it: grown by 2 MB since the last collection
  // unless the test says otherwise.
  let committed = 0;
  // malloc is trimmed at every quiet point, even when the collection is skipped.
  let trims = 0;
  const collector = quietCollector(quietMs, {
    minGrowthBytes: 1 << 20,
    committedBytes: () => committed,
    trim: () => (trims += 1),
  });
  try {
    collector.arm();
    // Busy for a while (a session's messages): the collection must not start until quietMs after the last.
    let lastTouch = 0;
    for (let i = 0; i < 8; i++) {
      collector.touch();
      lastTouch = performance.now();
      await new Promise((r) => setTimeout(r, 50));
    }
    while (forced.length === 0) await new Promise((r) => setTimeout(r, 50));
    assert.ok(forced[0]! >= lastTouch + quietMs - 5, `collected at ${forced[0]} ms, last touch at ${lastTouch} ms`);
    await new Promise((r) => setTimeout(r, 3 * quietMs));
    assert.equal(forced.length, 1, 'once per arm()');
    assert.equal(trims, 1, 'malloc trimmed once, after the collection');
    // Cancelled: nothing runs.
    committed += 2 << 20;
    collector.arm();
    collector.cancel();
    await new Promise((r) => setTimeout(r, 3 * quietMs));
    assert.equal(forced.length, 1);
    assert.equal(trims, 1, 'cancelled: no trim either');
    // Armed again, but the heap has not grown by the minimum since the last collection: no pause.
    committed -= (2 << 20) - (512 << 10);
    collector.arm();
    await new Promise((r) => setTimeout(r, 3 * quietMs));
    assert.equal(forced.length, 1, 'no collection when the heap grew by less than minGrowthBytes');
    assert.equal(trims, 2, 'but malloc is trimmed: a session frees memory outside the V8 heap too');
    // Grown by more: it runs.
    committed += 2 << 20;
    collector.arm();
    while (forced.length === 1) await new Promise((r) => setTimeout(r, 50));
    assert.equal(forced.length, 2);
  } finally {
    collector.cancel();
    observer.disconnect();
  }
});

test('the compacting collection gives back the pages a burst left partly used', T, async () => {
  // In a worker with the payment worker's caps: a heap of its own, sized like the daemon's.
  const r = await inWorker<{ fragmentedMb: number; liveMb: number; afterMb: number }>(
    HEAP_JS,
    `async (mod) => {
      const v8 = await import('node:v8');
      const vm = await import('node:vm');
      v8.setFlagsFromString('--expose-gc');
      const gc = vm.runInNewContext('gc');
      const old = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
      // A burst: many small objects, one in 200 survives, scattered over every page.
      let keep = [];
      for (let r = 0; r < 20; r++) { const a = []; for (let i = 0; i < 50000; i++) a.push({ i, s: 'x' + i }); \
for (let i = 0; i < a.length; i += 50) keep.push(a[i]); }
      gc();
      keep = keep.filter((_, i) => i % 4 === 0);
      gc();
      const fragmentedMb = old().space_size / 2 ** 20;
      mod.compactingCollection(gc);
      return { fragmentedMb, liveMb: old().space_used_size / 2 ** 20, afterMb: old().space_size / 2 ** 20, \
kept: keep.length };
    }`,
    { resourceLimits: PAYMENT_WORKER_LIMITS },
  );
  assert.ok(r.fragmentedMb - r.liveMb > 1, `the burst left its pages partly used: ${JSON.stringify(r)}`);
  assert.ok(
    r.afterMb - r.liveMb < (r.fragmentedMb - r.liveMb) / 2,
    `compaction gave most of them back: ${JSON.stringify(r)}`,
  );
});

test(
  'the stats line shows each thread: main and payment heaps, the main heap limit, the thread priority',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const { createRig } = await import('../../rigs/rig.js');
    const rig = await createRig({ config: { log: { statsIntervalMs: 500 } } });
    try {
      const agent = await rig.startAgent();
      // The payment worker reports its heap with its health message, every 5 s.
      const line = await agent.waitForLog(
        (l) => {
          const memory = (l.stats as { memory?: { payment?: unknown } } | undefined)?.memory;
          return l.msg === 'stats' && memory?.payment != null;
        },
        20_000,
        'a stats line with the payment worker heap',
      );
      const stats = line.stats as {
        memory: { main: Record<string, number>; payment: Record<string, number>; mainHeapLimitMb: number };
        mainThreadNice: number;
        rssBytes: number;
      };
      for (const thread of [stats.memory.main, stats.memory.payment]) {
        assert.ok(thread.heapUsedBytes! > 0 && thread.heapUsedBytes! <= thread.heapTotalBytes!, JSON.stringify(thread));
      }
      assert.notDeepEqual(stats.memory.main, stats.memory.payment, 'two isolates, two heaps');
      assert.ok(stats.memory.mainHeapLimitMb > 0);
      assert.equal(typeof stats.mainThreadNice, 'number');
      assert.ok(stats.rssBytes > stats.memory.main.heapUsedBytes! + stats.memory.payment.heapUsedBytes!);
      // No display configured and no fleet link: those workers do not exist, and the line says so.
      assert.equal((stats.memory as Record<string, unknown>).display, null);
      assert.equal((stats.memory as Record<string, unknown>).fleet, null);
    } finally {
      await rig.close();
    }
  },
);

test(
  'with a display and the fleet link on, the stats line shows their workers heaps too',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const { createRig } = await import('../../rigs/rig.js');
    const { startTestBroker } = await import('../../rigs/broker/index.js');
    const broker = await startTestBroker();
    const dir = mkdtempSync(join(tmpdir(), 'qrvend-stats-'));
    const rig = await createRig({
      config: {
        log: { statsIntervalMs: 500 },
        display: { png: join(dir, 'screen.png'), terminal: false },
        fleet: { url: broker.url, machineId: 'M-STATS', healthIntervalS: 5 },
      },
    });
    try {
      const agent = await rig.startAgent();
      type Heap = { heapUsedBytes: number; heapTotalBytes: number; externalBytes: number };
      // The fleet worker answers each health round (every 4 s here), the display worker each stats line.
      const line = await agent.waitForLog(
        (l) => {
          const memory = (l.stats as { memory?: Record<string, unknown> } | undefined)?.memory;
          return l.msg === 'stats' && memory?.payment != null && memory.display != null && memory.fleet != null;
        },
        30_000,
        'a stats line with the display and fleet worker heaps',
      );
      const memory = (line.stats as { memory: Record<'main' | 'payment' | 'display' | 'fleet', Heap> }).memory;
      for (const name of ['main', 'payment', 'display', 'fleet'] as const) {
        const heap = memory[name];
        assert.ok(
          heap.heapUsedBytes > 0 && heap.heapUsedBytes <= heap.heapTotalBytes,
          `${name}: ${JSON.stringify(heap)}`,
        );
      }
      // Four isolates: the display worker holds the canvas, the fleet worker mqtt; no two report one heap.
      const used = new Set(
        (['main', 'payment', 'display', 'fleet'] as const).map((name) => memory[name].heapUsedBytes),
      );
      assert.equal(used.size, 4, JSON.stringify(memory));
    } finally {
      await rig.close();
      await broker.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
