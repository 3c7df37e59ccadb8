/**
 * What the daemon's main thread loads (docs/decisions/targets.md, resident memory; BENCHMARKS.md, memory):
 * it lives as long as the agent and keeps every module it ever loaded, so the libraries only the
 * workers need stay out of it: zod (the config schema is checked in a short-lived worker,
 * src/config/load-off-thread.ts), got and the gateway protocol (payment worker), mqtt (fleet
 * worker), the canvas (display worker). Read from the compiled modules' static imports, from
 * `qrvend run`'s entry and the daemon module it loads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const ENTRIES = ['daemon/run.js', 'daemon/daemon.js'];
const KEPT_OUT = ['zod', 'got', 'mqtt', '@napi-rs/canvas', 'better-sqlite3', 'commander'];

/** Every module the entries load statically, with the packages each imports. */
function staticGraph(entries: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const visit = (file: string) => {
    if (graph.has(file)) return;
    const packages: string[] = [];
    graph.set(file, packages);
    const source = readFileSync(file, 'utf8');
    // `import x from '...'`, `import '...'`, `export ... from '...'`; `import type` is gone from the compiled code.
    for (const m of source.matchAll(/^\s*(?:import|export)\s(?:[^;'"]*?\sfrom\s*)?['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:')) packages.push(spec);
    }
  };
  for (const entry of entries) visit(resolve(SRC, entry));
  return graph;
}

test(
  'the main thread loads neither zod, got, mqtt, the canvas, SQLite nor commander',
  { timeout: TEST_DEADLINE_MS },
  () => {
    const graph = staticGraph(ENTRIES);
    assert.ok(
      graph.size > 20,
      `only ${graph.size} modules found: the import pattern no longer matches the compiled code`,
    );
    const found: string[] = [];
    for (const [file, packages] of graph) {
      for (const p of packages)
        if (KEPT_OUT.some((k) => p === k || p.startsWith(`${k}/`)))
          found.push(`${file.slice(SRC.length + 1)} imports ${p}`);
    }
    assert.deepEqual(found, []);
    // The scan does see packages: the main thread's own ones are there.
    const all = new Set([...graph.values()].flat());
    assert.ok(all.has('pino') && all.has('serialport'), `packages found: ${[...all].join(', ')}`);
  },
);
