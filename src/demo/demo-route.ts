/**
 * The route of `qrvend demo --console` (docs/console.md, "A day on the route"): a template of six
 * selections applied to every simulated machine, all filled to par when the demo starts, one route
 * through them; the machines then sell from these selections, so the stock goes down and the
 * route's pick list fills as the demo runs.
 */
import type { Kysely } from 'kysely';
import { readPlanogramCsv } from '../console/route/planogram-file.js';
import { applyTemplate, knownPlanograms, writePlanogramSet } from '../console/store/planogram-store.js';
import { recordFill } from '../console/store/route-queries.js';
import { saveRoute } from '../console/store/route-store.js';
import type { ConsoleDatabase } from '../console/store/schema.js';

export const DEMO_ROUTE = 'Demo route';

const PLANOGRAM = [
  'template,model,selection,product,name,names,measurement,unit,age_limit,capacity,par,threshold,price',
  'SNACK-6,SnackPro 6,11,WATER,Still water 0.5 l,de=Stilles Wasser|fr=Eau plate,500,ml,,12,10,4,1.50',
  'SNACK-6,SnackPro 6,12,COLA,Cola 0.33 l,de=Cola,330,ml,,12,10,4,2.00',
  'SNACK-6,SnackPro 6,13,JUICE,Orange juice 0.25 l,de=Orangensaft,250,ml,,8,6,2,2.20',
  'SNACK-6,SnackPro 6,21,CHOCO,Chocolate bar,de=Schokoriegel,50,g,,10,8,3,1.20',
  'SNACK-6,SnackPro 6,22,CHIPS,Crisps,de=Chips,40,g,,10,8,3,1.30',
  'SNACK-6,SnackPro 6,23,GUM,Chewing gum,de=Kaugummi,1,Unit,,15,12,4,0.90',
].join('\n');

/** What the simulated machines sell: each selection and its price as the VMC asks it. */
export const DEMO_SELECTIONS: { item: number; price: string }[] = [
  { item: 11, price: '1.50' },
  { item: 12, price: '2.00' },
  { item: 13, price: '2.20' },
  { item: 21, price: '1.20' },
  { item: 22, price: '1.30' },
  { item: 23, price: '0.90' },
];

/** The planogram, applied to `machines`, each filled to par, one route through them. */
export async function seedDemoRoute(db: Kysely<ConsoleDatabase>, machines: string[], nowMs: number): Promise<void> {
  const parsed = readPlanogramCsv(PLANOGRAM, await knownPlanograms(db));
  if (!parsed.ok) throw new Error(`the demo's planogram: ${parsed.problems[0]?.message ?? 'refused'}`);
  await writePlanogramSet(db, parsed.set, nowMs);
  await applyTemplate(db, 'SNACK-6', machines, nowMs);
  for (const machineId of machines)
    await recordFill(db, { machineId, counts: 'par', user: 'demo', note: 'the demo starts full', nowMs });
  await saveRoute(db, DEMO_ROUTE, [], machines);
}
