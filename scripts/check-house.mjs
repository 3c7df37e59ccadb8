#!/usr/bin/env node
// The house's size rules, checked in CI beside Prettier (CONTRIBUTING.md, "Style"): no line over
// 120 characters, no file in src/ over 400 lines, no function in src/ over 80 lines. Prettier
// keeps code within 120 columns but never breaks a string, a template literal or a comment, so
// those are what this check finds. Exempt: fixtures (test/**/fixtures/, byte-for-byte captures) and
// markdown table rows built in code (a row is one line by definition). What is known and left for a
// later change is listed in scripts/check-house.allow (one `path kind` per line, kind `lines`,
// `size` or `function NAME`): a ratchet, so nothing new grows past the rules while the list shrinks.
//
//   node scripts/check-house.mjs          # prints each finding, exits 1 if there is one
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const MAX_LINE = 120;
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;
const ROOTS = ['src', 'rigs', 'test', 'bench', 'release', 'native'];
const repo = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const TABLE_ROW = /^\s*[`'"]?\|.*\|/;

function* files(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (entry !== 'fixtures' && entry !== 'node_modules') yield* files(path);
    } else if (/\.(ts|mjs)$/.test(entry)) {
      yield path;
    }
  }
}

function longFunctions(path, text) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, true);
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      if (last - first + 1 > MAX_FUNCTION_LINES) {
        const name =
          node.name?.getText() ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText() : '(anonymous)');
        const text = `${first + 1}: function ${name} is ${last - first + 1} lines (at most ${MAX_FUNCTION_LINES})`;
        found.push({ name, text });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const allowText = readFileSync(join(repo, 'scripts/check-house.allow'), 'utf8');
const allowed = new Set(
  allowText
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#')),
);
const used = new Set();
function allow(rel, kind) {
  const key = `${rel} ${kind}`;
  if (!allowed.has(key)) return false;
  used.add(key);
  return true;
}

const findings = [];
for (const root of ROOTS) {
  for (const path of files(join(repo, root))) {
    const rel = relative(repo, path);
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      if (line.length > MAX_LINE && !TABLE_ROW.test(line) && !allow(rel, 'lines')) {
        findings.push(`${rel}:${i + 1}: line of ${line.length} characters (at most ${MAX_LINE})`);
      }
    });
    if (root !== 'src') continue;
    if (lines.length > MAX_FILE_LINES && !allow(rel, 'size'))
      findings.push(`${rel}: ${lines.length} lines (at most ${MAX_FILE_LINES})`);
    for (const f of longFunctions(path, text)) if (!allow(rel, `function ${f.name}`)) findings.push(`${rel}:${f.text}`);
  }
}

for (const key of allowed)
  if (!used.has(key)) findings.push(`scripts/check-house.allow: "${key}" is no longer needed: remove it`);
for (const f of findings) console.log(f);
if (findings.length > 0) {
  console.log(`check-house: ${findings.length} finding(s); split the line, file or function (CONTRIBUTING.md, Style)`);
  process.exit(1);
}
const left = allowed.size > 0 ? ` beyond the ${allowed.size} known and left in scripts/check-house.allow` : '';
console.log(`check-house: no line over 120, no src file over 400 lines, no src function over 80 lines${left}`);
