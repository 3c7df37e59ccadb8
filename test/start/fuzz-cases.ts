/**
 * Generated Start requests for the fuzz tests, and the oracle that says whether one should be
 * accepted. Bodies range from random bytes to near-valid Starts with one member broken, so that
 * the later checks (token, machine, replay, busy) are reached often, not only the JSON parser.
 */
import fc from 'fast-check';
import { validateStartRequest } from '../../src/gateway/protocol/start.js';
import { isAcceptedContentType, matchStartPath } from '../../src/start/route.js';
import { INTEGRATOR, TERMINAL_ID, TOKEN, UNI_QR } from './helpers.js';

export interface FuzzCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The payment side's state for this case. */
  busy: string | null;
  failAccept: boolean;
}

const OMIT = Symbol('omit');
/** A member value: mostly a good one, sometimes anything at all, sometimes absent. */
function member<T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<unknown>[] = []): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: good, weight: 12 },
    { arbitrary: fc.constant(OMIT), weight: 1 },
    { arbitrary: fc.constant(null), weight: 1 },
    { arbitrary: fc.anything({ maxDepth: 2 }), weight: 1 },
    ...bad.map((arbitrary) => ({ arbitrary, weight: 1 })),
  );
}

const lengths = (min: number, max: number) => fc.string({ minLength: min, maxLength: max, unit: 'grapheme' });

/** Transaction ids: many fresh ones, and a small pool so that replays happen. */
const transactionId = fc.oneof(
  { arbitrary: fc.uuid(), weight: 6 },
  { arbitrary: fc.constantFrom('replay-0001', 'replay-0002', 'replay-0003'), weight: 3 },
  { arbitrary: lengths(0, 45), weight: 1 },
);

const token = fc.oneof(
  { arbitrary: fc.constant(TOKEN), weight: 8 },
  { arbitrary: fc.constantFrom('', TOKEN.slice(0, 63), `${TOKEN}x`, TOKEN.toUpperCase(), 'x'.repeat(64)), weight: 2 },
  { arbitrary: lengths(0, 80), weight: 1 },
);

/** A Start that passes every check unless the payment side is busy or the id was used. */
const goodStart = fc.record({
  AppUserId: lengths(1, 40),
  SecretToken: fc.constant(TOKEN),
  TerminalId: fc.constant(TERMINAL_ID),
  TransactionId: transactionId,
  Balance: fc.integer({ min: 0, max: 100_000 }).map((n) => n / 100),
  ConsumerData: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
});

/** A good Start with at most one member replaced or removed: reaches every later check. */
const nearlyGoodStart = fc
  .tuple(
    goodStart,
    fc.option(
      fc.tuple(
        fc.constantFrom(
          'AppUserId',
          'SecretToken',
          'TerminalId',
          'UniQR',
          'TransactionId',
          'Balance',
          'ConsumerData',
          'Extra',
        ),
        fc.oneof(
          fc.constant(OMIT),
          fc.constant(null),
          fc.anything({ maxDepth: 2 }),
          token,
          lengths(0, 300),
          fc.constantFrom(TERMINAL_ID, 'TERM-9999', UNI_QR, 'OTHER-QR', -1, 1.2345, 1e308),
        ),
      ),
      { freq: 2 },
    ),
  )
  .map(([start, mutation]) => {
    const out: Record<string, unknown> = { ...start };
    if (mutation !== null) {
      const [key, value] = mutation;
      if (value === OMIT) delete out[key];
      else out[key] = value;
    }
    return out;
  });

/** Every member drawn independently: many problems at once (the order of checks decides). */
const roughStart = fc
  .record({
    AppUserId: member(lengths(1, 40), [lengths(41, 60), fc.constant('')]),
    SecretToken: member(token),
    TerminalId: member(fc.constantFrom(TERMINAL_ID, TERMINAL_ID, TERMINAL_ID, 'TERM-9999'), [lengths(0, 300)]),
    UniQR: fc.oneof(fc.constant(OMIT), fc.constant(OMIT), member(fc.constantFrom(UNI_QR, 'OTHER-QR'))),
    TransactionId: member(transactionId),
    Balance: fc.oneof(
      fc.constant(OMIT),
      member(
        fc.integer({ min: 0, max: 100_000 }).map((n) => n / 100),
        [fc.double(), fc.constant(-1)],
      ),
    ),
    ConsumerData: fc.oneof(
      fc.constant(OMIT),
      member(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })),
    ),
    extra: fc.option(fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }), {
      nil: undefined,
    }),
  })
  .map(({ extra, ...members }) => {
    const out: Record<string, unknown> = { ...extra };
    for (const [key, value] of Object.entries(members)) if (value !== OMIT) out[key] = value;
    return out;
  });

const deepNesting = fc
  .integer({ min: 1, max: 4_000 })
  .chain((depth) =>
    fc.constantFrom(
      '['.repeat(depth) + ']'.repeat(depth),
      `{"ConsumerData":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)},"TransactionId":"deep-nest-1"}`,
      '{"a":'.repeat(depth),
    ),
  );

const body: fc.Arbitrary<Buffer> = fc.oneof(
  { arbitrary: nearlyGoodStart.map((o) => Buffer.from(JSON.stringify(o))), weight: 20 },
  { arbitrary: roughStart.map((o) => Buffer.from(JSON.stringify(o))), weight: 8 },
  { arbitrary: fc.json({ maxDepth: 3 }).map((s) => Buffer.from(s)), weight: 2 },
  { arbitrary: fc.string({ maxLength: 200, unit: 'binary' }).map((s) => Buffer.from(s)), weight: 1 },
  { arbitrary: fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)), weight: 1 },
  { arbitrary: deepNesting.map((s) => Buffer.from(s)), weight: 1 },
  // around maxBodyBytes
  { arbitrary: fc.integer({ min: 15_000, max: 20_000 }).map((n) => Buffer.alloc(n, 0x20)), weight: 1 },
);

const START_PATH = `/payment/v2/transactions/Gateway/${INTEGRATOR}/start`;
export const path = fc.oneof(
  { arbitrary: fc.constant(START_PATH), weight: 30 },
  { arbitrary: fc.webSegment().map((seg) => `/payment/v2/transactions/Gateway/${seg}/start`), weight: 1 },
  { arbitrary: fc.webPath(), weight: 1 },
  { arbitrary: fc.string({ maxLength: 80 }).map((s) => `/${s}`), weight: 1 },
  {
    arbitrary: fc.constantFrom(
      `${START_PATH}?x=1`,
      `${START_PATH}/`,
      START_PATH.toUpperCase(),
      `/payment/v2/transactions/Gateway/${INTEGRATOR}%2Fx/start`,
    ),
    weight: 1,
  },
);

/** Methods Node's HTTP parser knows (others are refused before our handler; covered over HTTP). */
export const method = fc.oneof(
  { arbitrary: fc.constant('POST'), weight: 30 },
  { arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'), weight: 2 },
);

const contentType = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/json',
      'application/vnd.w+json',
    ),
    weight: 30,
  },
  { arbitrary: fc.constantFrom('text/plain', 'application/json; charset=latin1', 'application/jsonp', ''), weight: 1 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 1 },
);

export const fuzzCase: fc.Arbitrary<FuzzCase> = fc
  .record({
    method,
    path,
    contentType: fc.option(contentType, { nil: undefined, freq: 40 }),
    extraHeaders: fc.dictionary(
      fc.constantFrom('x-a', 'accept', 'user-agent', 'x-forwarded-for'),
      fc.string({ maxLength: 20 }),
      { maxKeys: 2 },
    ),
    expect: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 20 },
      { arbitrary: fc.constant('100-continue'), weight: 2 },
      { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
    ),
    body,
    busy: fc.oneof(
      { arbitrary: fc.constant(null), weight: 10 },
      { arbitrary: fc.constantFrom('reader not enabled', 'session running', 'sessions refused: disk'), weight: 1 },
    ),
    failAccept: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  })
  .map(({ contentType: type, extraHeaders, expect, ...rest }) => ({
    ...rest,
    headers: {
      ...extraHeaders,
      ...(expect === undefined ? {} : { expect }),
      ...(type === undefined ? {} : { 'content-type': type }),
      'content-length': String(rest.body.length),
    },
  }));

/**
 * Should this case reach the payment side? Written from the rules, independently of the code
 * under test (it shares only the protocol's schema, the one place the Start rules live).
 */
export function shouldAccept(c: FuzzCase, seen: ReadonlySet<string>, maxBodyBytes: number): boolean {
  if (c.method !== 'POST' || matchStartPath(c.path) !== INTEGRATOR) return false;
  if (!isAcceptedContentType(c.headers['content-type'])) return false;
  if (c.body.length > maxBodyBytes) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(c.body));
  } catch {
    return false;
  }
  if (depthOf(parsed) > 32) return false; // the endpoint's nesting bound
  const v = validateStartRequest(parsed);
  if (!v.ok || v.value.SecretToken !== TOKEN) return false;
  if (v.value.TerminalId != null && v.value.TerminalId !== TERMINAL_ID) return false;
  if (v.value.UniQR != null && v.value.UniQR !== UNI_QR) return false;
  return !seen.has(v.value.TransactionId) && c.busy === null;
}

/** Nesting depth of a parsed JSON value (arrays and objects count one level each). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const child of Object.values(value as Record<string, unknown>)) deepest = Math.max(deepest, depthOf(child));
  return deepest + 1;
}
