#!/usr/bin/env node
// Reads Stryker's JSON report (reports/mutation/mutation.json, written by `npm run mutation`) and
// prints the score of each mutated folder (the target is >= 85 % killed in each), then every
// mutant that was not killed, one a line: file:line:column, mutator, replacement.
// Usage: node scripts/mutation-summary.mjs [report.json]
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';

const file = process.argv[2] ?? 'reports/mutation/mutation.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (err) {
  console.error(`mutation-summary: cannot read ${file} (${err.code ?? err.message}); run \`npm run mutation\` first`);
  process.exit(2);
}

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
const folders = new Map();
const missed = [];
for (const [path, { mutants }] of Object.entries(report.files)) {
  // src/flows/static-qr/flow.ts counts under src/flows, as the folders do.
  const folder = dirname(path).split('/').slice(0, path.startsWith('src/mdb/') ? 3 : 2).join('/');
  const f = folders.get(folder) ?? { detected: 0, undetected: 0 };
  for (const m of mutants) {
    if (DETECTED.has(m.status)) f.detected += 1;
    else if (UNDETECTED.has(m.status)) {
      f.undetected += 1;
      const code = (m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 100);
      missed.push(`${path}:${m.location.start.line}:${m.location.start.column} ${m.status} ${m.mutatorName}: ${code}`);
    }
  }
  folders.set(folder, f);
}

let failed = false;
for (const [folder, f] of [...folders].sort()) {
  const total = f.detected + f.undetected;
  const score = total === 0 ? 100 : (100 * f.detected) / total;
  if (score < 85) failed = true;
  console.log(`${folder.padEnd(18)} ${score.toFixed(1).padStart(5)} % killed (${f.detected} of ${total})${score < 85 ? '  below 85 %' : ''}`);
}
if (missed.length > 0) console.log(`\nnot killed (${missed.length}):\n${missed.join('\n')}`);
process.exitCode = failed ? 1 : 0;
