/**
 * Planogram files, read and written (src/console/route/planogram-file.ts): a good CSV gives the
 * set it says; a bad one gives no set and names every bad line and column; JSON alike with paths;
 * what is written reads back the same (a name a spreadsheet would run as a formula included).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  readPlanogramCsv,
  readPlanogramJson,
  writePlanogramCsv,
  writePlanogramJson,
} from '../../../src/console/route/planogram-file.js';
import type { Known } from '../../../src/console/route/planogram-rules.js';

const NOTHING: Known = { products: new Set(), templates: new Map() };

// A template of two selections whose lines define their products, a product alone, a machine
// running the template with its own price for selection 12.
const GOOD = [
  'template,model,machine,selection,product,name,names,measurement,unit,age_limit,capacity,par,threshold,price',
  'T-40,SnackPro 40,,12,WATER,Water,de=Wasser|fr=Eau,500,ml,,20,16,4,1.50',
  'T-40,SnackPro 40,,21,BEER,Beer,,330,ml,18,10,8,2,2.5',
  ',,,,GUM,Gum,,1,Unit,,,,,',
  'T-40,,M-1,,,,,,,,,,,',
  'T-40,,M-1,12,,,,,,,,,,1.70',
].join('\n');

test('a good CSV gives the set it says', () => {
  const r = readPlanogramCsv(GOOD, NOTHING);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.problems));
  assert.deepEqual(
    r.set.products.map((p) => [p.code, p.name, p.names, p.measurement, p.unit, p.ageLimit]),
    [
      ['WATER', 'Water', { de: 'Wasser', fr: 'Eau' }, 500, 'ml', null],
      ['BEER', 'Beer', {}, 330, 'ml', 18],
      ['GUM', 'Gum', {}, 1, 'Unit', null],
    ],
  );
  assert.deepEqual(r.set.templates, [
    {
      templateId: 'T-40',
      model: 'SnackPro 40',
      selections: [
        { selection: 12, productCode: 'WATER', capacity: 20, par: 16, threshold: 4, priceMilli: 1500 },
        { selection: 21, productCode: 'BEER', capacity: 10, par: 8, threshold: 2, priceMilli: 2500 },
      ],
    },
  ]);
  assert.deepEqual(r.set.machines, [
    { machineId: 'M-1', templateId: 'T-40', overrides: [{ selection: 12, priceMilli: 1700 }] },
  ]);
});

test('a bad CSV gives nothing and names each bad line and column', () => {
  const bad = [
    'template,model,machine,selection,product,name,capacity,par,threshold,price',
    'T-40,SnackPro 40,,12,WATER,Water,20,16,4,1.50', // line 2: good
    'T-40,,,12,WATER,,20,16,4,1.5', // line 3: selection 12 twice
    'T-40,,,13,WATER,,20,16,4,one euro', // line 4: the price
    'T-40,,M 1,,,,,,,', // line 5: a machine id with a space
    'T-99,,M-2,,,,,,,', // line 6: no such template
    'T-40,,M-3,77,,,,,,', // line 7: selection 77 not in T-40
    'T-40,,,14,WATER,,20,21,4,1.50', // line 8: par above capacity
    'T-40,,,15,COLA,,20,16,4,1.00', // line 9: COLA is defined nowhere
  ].join('\n');
  const r = readPlanogramCsv(bad, NOTHING);
  assert.ok(!r.ok);
  assert.deepEqual(
    r.problems.map((p) => `${p.where}: ${p.message}`),
    [
      'line 3, column selection: selection 12 of template T-40 is given at line 2, column selection already',
      'line 4, column price: a price is a decimal with at most 3 decimals, e.g. 1.50 (got "one euro")',
      'line 5, column machine: a machine id is 1-128 letters, digits or . _ : -',
      'line 6, column template: template T-99 is not defined',
      'line 7, column selection: selection 77 is not in template T-40',
      'line 8, column par: the par level 21 is above the capacity 20',
      'line 9, column product: product COLA is not defined',
    ],
  );
});

test('a header with an unknown column, and a malformed quote, are refused where they are', () => {
  const r1 = readPlanogramCsv('template,colour\nT,red\n', NOTHING);
  assert.ok(!r1.ok);
  assert.match(r1.problems[0]!.where, /^line 1, column 2$/);
  const r2 = readPlanogramCsv('template,model\nT,"SnackPro\n', NOTHING);
  assert.ok(!r2.ok);
  assert.match(r2.problems[0]!.where, /^line \d+$/);
});

test('JSON problems are named by their path; a product the database holds may be used', () => {
  const known: Known = { products: new Set(['WATER']), templates: new Map() };
  const doc = {
    templates: [
      {
        template: 'T-1',
        selections: [
          { selection: 1, product: 'WATER', capacity: 10, par: 8, threshold: 2, price: '1.00' },
          { selection: 2, product: 'WATER', capacity: 10, par: 8, threshold: 9, price: '1.00' },
          { selection: 3, product: 'WATER', capacity: [10], par: 8, threshold: 2, price: '1.00', colour: 'red' },
        ],
      },
    ],
  };
  const r = readPlanogramJson(JSON.stringify(doc), known);
  assert.ok(!r.ok);
  assert.deepEqual(
    r.problems.map((p) => `${p.where}: ${p.message}`),
    [
      'templates[0].selections[1].threshold: the threshold 9 is above the par level 8',
      'templates[0].selections[2].capacity: text or a number is needed here',
      'templates[0].selections[2].colour: not one of selection, product, capacity, par, threshold, price',
      'templates[0].selections[2].capacity: a whole number from 1 to 1000 (got "")',
    ],
  );
  const fixed = readPlanogramJson(
    JSON.stringify({ templates: [{ ...doc.templates[0], selections: [doc.templates[0]!.selections[0]] }] }),
    known,
  );
  assert.ok(fixed.ok);
});

test('what is written reads back the same, as CSV and as JSON', () => {
  const r = readPlanogramCsv(GOOD, NOTHING);
  assert.ok(r.ok);
  // A name a spreadsheet would run is written with a leading ' and read back without it.
  r.set.products[2]!.name = '=HYPERLINK("x")';
  const csvText = writePlanogramCsv(r.set);
  assert.match(csvText, /'=HYPERLINK/);
  const again = readPlanogramCsv(csvText, NOTHING);
  assert.ok(again.ok, JSON.stringify(!again.ok && again.problems));
  assert.deepEqual(again.set, r.set);
  const json = readPlanogramJson(writePlanogramJson(r.set), NOTHING);
  assert.ok(json.ok, JSON.stringify(!json.ok && json.problems));
  assert.deepEqual(json.set, r.set);
});
