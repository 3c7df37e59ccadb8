/**
 * `npm run console-bench`: the operator console's figures alone (bench/console.ts; `npm run bench`
 * takes the same figures among the others), printed as the bench's table.
 */
import os from 'node:os';
import { benchConsole } from './console.js';
import { formatTable } from './report.js';
import { Budget } from './support/budget.js';

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
process.stdout.write(`console bench; load average at start ${load()}\n`);
const figures = await benchConsole(new Budget(600_000));
process.stdout.write(`${formatTable(figures)}\n\nload average at end ${load()}\n`);
process.exit(figures.some((f) => f.status === 'error') ? 1 : 0);
