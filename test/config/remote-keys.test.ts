/**
 * What the fleet may set (docs/decisions/fleet-trust.md item 3): the allowlist, the ceiling and the floor, and the
 * table in docs/fleet.md.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { keyNameProblems, REMOTE_KEYS, remoteKeyProblems } from '../../src/config/remote-keys.js';
import { DISPLAY_COLOR_NAMES, minorUnitProblem } from '../../src/config/schema.js';

const T = { timeout: 5_000 };
const base = {
  staticQr: { preauthAmount: 5 },
  fleet: { remoteLimits: { maxPreauthAmount: null } },
  catalog: { '12': { name: 'Water', ageLimit: 18 } },
};
const paths = (set: Record<string, unknown>, b: unknown = base) => remoteKeyProblems(set, b).map((p) => p.path);

test(
  'every path, URL, credential, identity, money route, store, fleet link, log and Start key is refused, named whole',
  T,
  () => {
    const refused = {
      gateway: { baseUrl: 'https://evil.example', timeoutMs: 1000, caFile: '/x' },
      start: { listen: '0.0.0.0:80', secretTokenFile: '/x', behindTlsProxy: true },
      machine: { terminalId: 'X', uniQr: 'Y', decimalPlaces: 0, currencyCode: 'USD' },
      actor: { merchantId: 'm' },
      customData: { Operator: '{}' },
      device: { hwSerial: 'h' },
      mdb: { port: '/dev/x', baudRate: 9600, virtualCredit: 5 },
      store: { path: '/x' },
      display: {
        png: '/var/lib/qrvend/ledger.sqlite',
        framebuffer: '/dev/fb0',
        logo: '/x',
        receiptUrl: 'https://x/{txId}',
      },
      fleet: {
        url: 'mqtts://evil',
        passwordFile: '/x',
        machineId: 'other',
        trustFile: '/tmp/t',
        allowUnsignedReads: true,
        remoteLimits: { maxPreauthAmount: 1e6 },
      },
      log: { level: 'silent' },
      gpio: { mode: 'off' },
      dynamicQr: { channelId: 'c' },
    };
    const got = paths(refused);
    const expected: string[] = [];
    for (const [section, keys] of Object.entries(refused)) {
      for (const [k, v] of Object.entries(keys)) {
        if (typeof v === 'object' && v !== null)
          for (const kk of Object.keys(v)) expected.push(`${section}.${k}.${kk}`);
        else expected.push(`${section}.${k}`);
      }
    }
    assert.deepEqual(got.sort(), expected.sort());
  },
);

test("the keys of the table pass, and the pre-authorization amount stays under the site's ceiling", T, () => {
  assert.deepEqual(
    paths({
      mdb: { sessionIdleTimeoutMs: 1 },
      display: { language: 'de', colors: { accent: '#000000' } },
      catalog: { '7': { name: 'Tea', names: { de: 'Tee' } } },
      staticQr: { preauthAmount: 5, verifyAge: true },
    }),
    [],
  );
  assert.deepEqual(
    paths({ staticQr: { preauthAmount: 5.01 } }),
    ['staticQr.preauthAmount'],
    "above the site's own amount",
  );
  assert.deepEqual(paths({ staticQr: { preauthAmount: 500 } }), ['staticQr.preauthAmount']);
  const withLimit = { ...base, fleet: { remoteLimits: { maxPreauthAmount: 8 } } };
  assert.deepEqual(paths({ staticQr: { preauthAmount: 8 } }, withLimit), []);
  assert.deepEqual(paths({ staticQr: { preauthAmount: 8.5 } }, withLimit), ['staticQr.preauthAmount']);
});

test('an age limit may be raised from afar, never lowered or removed', T, () => {
  assert.deepEqual(paths({ catalog: { '12': { ageLimit: 21 } } }), []);
  assert.deepEqual(paths({ catalog: { '12': { ageLimit: 16 } } }), ['catalog.12.ageLimit']);
  assert.deepEqual(paths({ catalog: { '12': { ageLimit: null } } }), ['catalog.12.ageLimit']);
  assert.deepEqual(
    paths({ catalog: { '99': { name: 'New', ageLimit: null } } }),
    [],
    'an item the site does not restrict',
  );
});

test('docs/fleet.md shows exactly this table', T, () => {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/fleet.md', import.meta.url)), 'utf8');
  const m = /<!-- remote-keys:start -->\n([\s\S]*?)<!-- remote-keys:end -->/.exec(doc);
  assert.ok(m, 'docs/fleet.md marks the table with remote-keys:start / remote-keys:end');
  const rows = m[1]!.split('\n').filter((l) => l.startsWith('| `'));
  assert.deepEqual(
    rows,
    REMOTE_KEYS.map((k) => `| \`${k.path}\` | ${k.bound} |`),
  );
});

test(
  "the overlay holds each key in the allowlist's one spelling: " +
    '__proto__, an item number "012", an unnamed colour refused',
  T,
  () => {
    // Parsed from JSON, as config.set's arguments and the overlay file are: __proto__ is a member here.
    const set = JSON.parse(
      '{"catalog":{"__proto__":{"name":"x"},"012":{"name":"Water"},"12":{"name":"Tea"}},' +
        '"display":{"colors":{"__proto__":{"text":"#000000"},"glow":"#ffffff","text":"#000000"}}}',
    ) as Record<string, unknown>;
    const named = keyNameProblems(set).map((p) => `${p.path}: ${p.reason}`);
    assert.deepEqual(named, [
      "catalog.__proto__: not an MDB item number (the catalog's keys are item numbers such as 12)",
      'catalog.012: an MDB item number is written without leading zeros: write it 12',
      'display.colors.__proto__: not settable from the fleet: not a configuration key',
      'display.colors.glow: not settable from the fleet: display.colors has background, text, accent, error, muted',
    ]);
    // The loader holds an overlay file to the same rule.
    assert.deepEqual(paths(set), [
      'catalog.__proto__',
      'catalog.012',
      'display.colors.__proto__',
      'display.colors.glow',
    ]);
    assert.deepEqual(
      keyNameProblems(JSON.parse('{"constructor":{"prototype":1}}')).map((p) => p.path),
      ['constructor'],
    );
    assert.deepEqual(keyNameProblems({ catalog: { '0': { name: 'Zero' }, '12': { names: { de: 'Wasser' } } } }), []);
  },
);

test('the colours config.set may name are those config/default.json sets (every key the schema has)', T, () => {
  const defaults = JSON.parse(
    readFileSync(fileURLToPath(new URL('../../../config/default.json', import.meta.url)), 'utf8'),
  ) as { display: { colors: Record<string, string> } };
  assert.deepEqual(Object.keys(defaults.display.colors).sort(), [...DISPLAY_COLOR_NAMES].sort());
});

test(
  'staticQr.preauthAmount is an amount of the currency: not below its smallest unit, not finer than its decimals',
  T,
  () => {
    assert.equal(minorUnitProblem(0.01, 2), null);
    assert.equal(minorUnitProblem(1.25, 2), null);
    assert.equal(minorUnitProblem(0.1 + 0.2, 2), null, "a float's last bits are not a decimal");
    assert.equal(minorUnitProblem(7, 0), null);
    assert.match(
      minorUnitProblem(1e-9, 2) ?? '',
      /1e-9 is below the smallest unit of the currency \(0\.01 with machine\.decimalPlaces 2\)/,
    );
    assert.match(minorUnitProblem(0.004, 2) ?? '', /below the smallest unit/);
    assert.match(minorUnitProblem(1.005, 2) ?? '', /1\.005 has more decimals than the currency's 2/);
    assert.match(
      minorUnitProblem(0.5, 0) ?? '',
      /below the smallest unit of the currency \(1 with machine\.decimalPlaces 0\)/,
    );
    assert.match(minorUnitProblem(1.5, 0) ?? '', /more decimals than the currency's 0/);
  },
);
