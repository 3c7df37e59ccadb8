/**
 * Recorded transcripts (docs/decisions/real-vending-machines.md item 9): conversations with the adapter board from its
 * maker's
 * documentation and from public clients, replayed through the codec and the reader; every line
 * the agent sends back is checked (test/fixtures/transcripts/).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { replay } from './transcript-replay.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const DIR = fileURLToPath(new URL('../../../test/fixtures/transcripts/', import.meta.url));
const FILES = readdirSync(DIR)
  .filter((f) => f.endsWith('.txt'))
  .sort();
const T = { timeout: TEST_DEADLINE_MS };

test('there are transcripts, and each names its source', T, () => {
  assert.ok(FILES.length >= 4, `transcripts in ${DIR}`);
  for (const f of FILES) assert.match(readFileSync(DIR + f, 'utf8'), /^# Source: /m, f);
});

for (const f of FILES) {
  test(`transcript ${f}`, T, () => {
    const r = replay(f, readFileSync(DIR + f, 'utf8'));
    assert.deepEqual(r.noise, [], 'every board line of the transcript is understood');
  });
}

test('the documented always-idle sale ends with the reader enabled and nothing in flight', T, () => {
  const r = replay('qibixx-always-idle.txt', readFileSync(DIR + 'qibixx-always-idle.txt', 'utf8'));
  assert.equal(r.model.state.kind, 'Enabled');
  assert.deepEqual(r.sent.slice(-1), ['C,VEND,1.00']);
});

test('a refused key: the reader is never enabled, whatever the board says next', T, () => {
  const r = replay(
    'khoover-mdbserver-refused-key.txt',
    readFileSync(DIR + 'khoover-mdbserver-refused-key.txt', 'utf8'),
  );
  assert.ok(!r.sent.includes('C,1'));
  assert.deepEqual(r.model.configRefused, { key: 'mdb-addr', value: '0x60', answer: 'c,ERR,SETCONF -1' });
});
