/**
 * Replays an annotated adapter-board transcript (test/fixtures/transcripts/README.md) through the
 * codec and the reader's transition function, and checks every line the agent sends back.
 */
import assert from 'node:assert/strict';
import { encodeCommand, parseBoardLine } from '../../src/mdb/codec/index.js';
import {
  initialModel,
  readerConfigFrom,
  transition,
  type ReaderConfig,
  type ReaderInput,
  type ReaderModel,
} from '../../src/mdb/reader/index.js';
import type { PaymentToMain } from '../../src/ipc/messages.js';
import { testMdb } from './support.js';

export interface ReplayResult {
  sent: string[];
  posted: string[];
  noise: string[];
  model: ReaderModel;
}

export function replay(name: string, text: string): ReplayResult {
  let mdb: Record<string, unknown> = {};
  let currency = '978';
  let cfg: ReaderConfig | null = null;
  let model = initialModel();
  const pending: string[] = []; // agent lines not yet matched by a `>` directive
  let postedSince: string[] = [];
  const result: ReplayResult = { sent: [], posted: [], noise: [], model };
  const where = (n: number, raw: string) => `${name}:${n} (${raw.trim()})`;

  const feed = (input: ReaderInput, at: string) => {
    assert.equal(pending.length, 0, `${at}: the agent sent lines the transcript does not list: ${pending.join(' ')}`);
    cfg ??= readerConfigFrom({
      mdb: testMdb(mdb as never),
      decimalPlaces: 2,
      currencyNumeric: currency,
      requestIdPrefix: 'rq',
    });
    const t = transition(model, input, cfg);
    model = t.model;
    for (const e of t.effects) {
      if (e.kind === 'send') {
        const line = encodeCommand(e.command, cfg.decimalPlaces);
        pending.push(line);
        result.sent.push(line);
      } else if (e.kind === 'post') {
        postedSince.push(e.message.type);
        result.posted.push(e.message.type);
      }
    }
  };

  text.split(/\r?\n/).forEach((raw, i) => {
    const n = i + 1;
    const body = raw.replace(/(^|\s)#.*$/, '').trimEnd();
    if (body.trim() === '') return;
    const at = where(n, raw);
    const m = /^(@|!|<|>|\?!|\?)\s+(.*)$/.exec(body);
    assert.ok(m, `${at}: not a directive`);
    const [, op, arg] = m as unknown as [string, string, string];
    switch (op) {
      case '@': {
        const [what, ...rest] = arg.split(/\s+/);
        if (what === 'mdb') mdb = { ...mdb, ...JSON.parse(rest.join(' ')) };
        else if (what === 'currency') currency = rest[0]!;
        else assert.fail(`${at}: unknown setting`);
        return;
      }
      case '!': {
        const [what, ...rest] = arg.split(/\s+/);
        if (what === 'link.up') return feed({ kind: 'link.up' }, at);
        if (what === 'pay') return feed({ kind: 'payment', message: JSON.parse(rest.join(' ')) as PaymentToMain }, at);
        if (what === 'timeout') return feed({ kind: 'timeout', timer: rest[0] as never }, at);
        return assert.fail(`${at}: unknown input`);
      }
      case '<': {
        const parsed = parseBoardLine(arg);
        if (!parsed.ok) {
          result.noise.push(arg);
          return;
        }
        return feed({ kind: 'line', line: parsed.value }, at);
      }
      case '>':
        assert.equal(pending.shift(), arg, `${at}: the agent's next line`);
        return;
      case '?':
        assert.ok(
          postedSince.includes(arg.trim()),
          `${at}: expected ${arg.trim()} among ${JSON.stringify(postedSince)}`,
        );
        postedSince = [];
        return;
      case '?!':
        assert.ok(!postedSince.includes(arg.trim()), `${at}: ${arg.trim()} was posted`);
        return;
    }
  });
  assert.equal(pending.length, 0, `${name}: the agent sent lines the transcript does not list: ${pending.join(' ')}`);
  result.model = model;
  return result;
}
