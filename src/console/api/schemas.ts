/**
 * The read API's JSON Schemas (docs/console.md "The API"): what each route takes and answers. The
 * routes validate their parameters with them, fastify serializes answers with them, and
 * @fastify/swagger builds /api/v1/openapi.json (OpenAPI 3.1, JSON Schema 2020-12) from them, so
 * the document is what the routes do.
 */
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const nstr = { type: ['string', 'null'] } as const;
const nint = { type: ['integer', 'null'] } as const;

/** An object whose every property is required (an answer always has each, null when unknown). */
function obj(properties: Record<string, object>, description?: string) {
  return {
    type: 'object',
    ...(description === undefined ? {} : { description }),
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  } as const;
}

/** A page of items and the cursor of the next page (null: this was the last). */
export function pageOf(item: object, description: string) {
  return obj(
    { items: { type: 'array', items: item }, nextCursor: { ...nstr, description: 'give as `cursor`' } },
    description,
  );
}

export const ERROR = obj({ error: obj({ code: str, message: str }) }, 'What was wrong, and the status says how');

export const MACHINE = obj({
  machineId: str,
  online: { type: 'boolean' },
  onlineSince: { ...nstr, description: 'when it went on- or offline (ISO 8601)' },
  terminalId: nstr,
  version: nstr,
  reader: nstr,
  disabledRemotely: { type: 'boolean' },
  gateway: nstr,
  outboxPending: int,
  outboxDead: int,
  alarms: { type: 'array', items: str },
  updateState: nstr,
  updateVersion: nstr,
  statusAt: nstr,
  seenAt: str,
  lastSaleAt: nstr,
  outOfOrder: { ...nstr, description: 'why it cannot sell now, or null' },
});

export const STATUS = obj({
  id: int,
  machineId: str,
  receivedAt: str,
  online: { type: 'boolean' },
  reader: nstr,
  gateway: nstr,
  outboxPending: int,
  outboxDead: int,
  version: nstr,
  alarms: { type: 'array', items: str },
});

export const SALE = obj({
  machineId: str,
  eventId: str,
  kind: { type: 'string', enum: ['qr', 'cash'] },
  day: str,
  at: str,
  txId: nstr,
  flow: nstr,
  amount: { ...str, description: 'decimal text as the gateway (or the VMC) gave it' },
  currency: str,
  closing: nstr,
  verdict: nstr,
  item: nint,
});

const AMOUNT = { ...str, description: 'decimal text, exact' };
export const DAILY = obj(
  {
    day: str,
    machineId: str,
    currency: str,
    paidCount: int,
    paid: AMOUNT,
    cashCount: int,
    cash: AMOUNT,
    cancelledCount: int,
    deadCount: int,
    dead: AMOUNT,
  },
  'One machine-day and currency: the rows of the sales page and its CSV',
);

export const ALARM = obj({
  id: int,
  machineId: str,
  code: str,
  raisedAt: str,
  raisedDetail: nstr,
  clearedAt: nstr,
  clearedDetail: nstr,
  advice: str,
});

export const AUDIT = obj({
  machineId: str,
  auditId: str,
  eventId: str,
  at: str,
  checkOk: { type: ['boolean', 'null'] },
  verdict: str,
  difference: nint,
  message: nstr,
});

export const ROLLOUT_VERSION = obj({ version: str, machines: int, last: str });
export const ROLLOUT_MACHINE = obj({
  machineId: str,
  state: str,
  at: str,
  running: str,
  detail: nstr,
  rolloutId: nstr,
});

export const SELECTION = obj({
  selection: int,
  productCode: str,
  capacity: int,
  par: int,
  threshold: int,
  price: AMOUNT,
  level: int,
  salesPerDay: { type: 'number' },
});

export const FEED_EVENT = obj({
  position: int,
  machineId: str,
  eventId: str,
  kind: str,
  at: str,
  receivedAt: str,
  event: { description: 'the event as the machine sent it (docs/fleet.md)' },
});

export const FEED_PAGE = obj(
  { events: { type: 'array', items: FEED_EVENT }, cursor: { ...int, description: 'give as `after` for what follows' } },
  'The event feed after a position, in the order stored',
);

/** Query parameters, each one string at most (a repeated one is a 400 naming it). */
export function query(params: Record<string, string>) {
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(params).map(([k, d]) => [k, { type: 'string', description: d }])),
    additionalProperties: false,
  } as const;
}

export const PAGING = {
  cursor: 'the nextCursor of the page before',
  limit: 'rows per page, 1-1000 (default 100)',
};
