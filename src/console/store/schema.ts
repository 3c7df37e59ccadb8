/**
 * The console's tables (docs/console.md), one description for SQLite and PostgreSQL. Times are
 * ISO 8601 UTC text (they sort as text in both databases); amounts are integer thousandths of
 * the currency unit (`*_milli`), so sums are exact whatever the currency's decimals (at most 3).
 */
import type { Generated } from 'kysely';
import type { ReachDatabase } from './reach-schema.js';

export interface MachinesTable {
  machine_id: string;
  online: number;
  terminal_id: string | null;
  version: string | null;
  reader: string | null;
  disabled_remotely: number;
  gateway: string | null;
  outbox_pending: number;
  outbox_dead: number;
  /** The raised alarm codes of the last status, comma-separated. */
  alarms: string;
  update_state: string | null;
  update_version: string | null;
  status_at: string | null;
  seen_at: string;
  last_sale_at: string | null;
  health_at: string | null;
  /** The last health message's stats (JSON, bounded). */
  health: string | null;
  /** What the machine last reported of its catalog document (its status's `catalog`, JSON), or null. */
  catalog_status?: string | null;
  /** When `online` last changed (migration 0007): how long a machine has been offline. */
  online_since?: string | null;
}

export interface StatusHistoryTable {
  id: Generated<number>;
  machine_id: string;
  received_at: string;
  online: number;
  reader: string | null;
  gateway: string | null;
  outbox_pending: number;
  outbox_dead: number;
  version: string | null;
  alarms: string;
}

export interface EventsTable {
  machine_id: string;
  event_id: string;
  kind: string;
  at: string;
  received_at: string;
  payload: string;
}

export interface SalesTable {
  machine_id: string;
  event_id: string;
  /** 'qr' (a payment through qrvend) or 'cash' (MDB CASH SALE, paid to another device). */
  kind: string;
  day: string;
  at: string;
  tx_id: string | null;
  flow: string | null;
  amount: string;
  /** Written as a BigInt; read back as the driver gives an integer (number or text): see `milliOf`. */
  amount_milli: bigint | number | string;
  currency: string;
  closing: string | null;
  verdict: string | null;
  item: number | null;
}

export interface DailyTotalsTable {
  day: string;
  machine_id: string;
  currency: string;
  paid_count: number;
  paid_milli: bigint;
  cash_count: number;
  cash_milli: bigint;
  cancelled_count: number;
  dead_count: number;
  dead_milli: bigint;
}

/** The whole fleet's totals per day (the sales page's chart and day table), kept beside daily_totals. */
export type FleetDailyTotalsTable = Omit<DailyTotalsTable, 'machine_id'>;

export interface AlarmsTable {
  id: Generated<number>;
  machine_id: string;
  code: string;
  raised_at: string;
  raised_detail: string | null;
  cleared_at: string | null;
  cleared_detail: string | null;
}

export interface AuditsTable {
  machine_id: string;
  audit_id: string;
  event_id: string;
  at: string;
  check_ok: number | null;
  verdict: string;
  difference: number | null;
  message: string | null;
  summary: string;
}

export interface UpdatesTable {
  machine_id: string;
  event_id: string;
  at: string;
  version: string;
  running: string;
  state: string;
  rollout_id: string | null;
  detail: string | null;
}

export interface UsersTable {
  name: string;
  role: string;
  password_hash: string;
  created_at: string;
  /** Where this account's alert notifications go (migration 0007); null: none by e-mail. */
  email: string | null;
  /** The IANA zone the account reads times in; null: the console's `timeZone` (migration 0003). */
  time_zone: string | null;
}

export interface SessionsTable {
  /** SHA-256 of the cookie's token: a copy of the database gives no session away. */
  token_hash: string;
  user_name: string;
  csrf: string;
  expires_ms: number;
}

export interface LoginFailuresTable {
  /** `addr:<address>` or `user:<name>`. */
  key: string;
  failures: number;
  window_start_ms: number;
}

/** Refused messages, counted per machine and reason (bounded: a flood adds to a count, not rows). */
export interface RefusalsTable {
  /** The topic's machine, or '' when the topic itself was refused. */
  machine_id: string;
  reason: string;
  count: number;
  last_at: string;
  last_detail: string;
}

export interface ConsoleDatabase extends RouteDatabase, ReachDatabase {
  machines: MachinesTable;
  status_history: StatusHistoryTable;
  events: EventsTable;
  sales: SalesTable;
  daily_totals: DailyTotalsTable;
  fleet_daily_totals: FleetDailyTotalsTable;
  alarms: AlarmsTable;
  audits: AuditsTable;
  updates: UpdatesTable;
  users: UsersTable;
  sessions: SessionsTable;
  login_failures: LoginFailuresTable;
  refusals: RefusalsTable;
}

// --- The route (migration 0006, ./route-migration.ts; docs/console.md, "A day on the route") ---

export interface ProductsTable {
  code: string;
  name: string;
  /** Names per language, JSON ({"de": "Wasser"}). */
  names: string;
  measurement: number;
  unit: string;
  age_limit: number | null;
}

export interface TemplatesTable {
  template_id: string;
  model: string;
  updated_at: string;
}

export interface TemplateSelectionsTable {
  template_id: string;
  /** The MDB item number the VMC sends for this selection. */
  selection: number;
  product_code: string;
  capacity: number;
  par: number;
  threshold: number;
  /** The intended price, thousandths of the currency unit. */
  price_milli: number;
}

export interface MachineTemplatesTable {
  machine_id: string;
  template_id: string;
}

/** A machine's own values over its template's, per selection (null: the template's). */
export interface SelectionOverridesTable {
  machine_id: string;
  selection: number;
  product_code: string | null;
  capacity: number | null;
  par: number | null;
  threshold: number | null;
  price_milli: number | null;
}

export interface StockTable {
  machine_id: string;
  selection: number;
  level: number;
  filled_at_ms: number | null;
  /** Vends since the current fill cycle began (cycle_since_ms), and the cycle before's (route/stock-math.ts). */
  cycle_vends: number;
  cycle_since_ms: number;
  prev_vends: number;
  prev_ms: number;
  /** The price the VMC last asked for this selection (a sale's or a cash sale's), thousandths. */
  asked_price_milli: number | null;
  asked_at: string | null;
  /**
   * The selection's planned values, a copy of its planogram (migration 0006b, ./planned-stock.ts);
   * all null when the selection is not in the machine's planogram (a vend of an unplanned item).
   */
  product_code?: string | null;
  capacity?: number | null;
  par?: number | null;
  threshold?: number | null;
  price_milli?: number | null;
}

/** Each vend stock counted, by the event (or payment) it came from: counted once, summed over an audit's interval. */
export interface StockVendsTable {
  machine_id: string;
  /** `tx:<txId>` for a QR payment (a dead-lettered one accepted later is one payment), else `ev:<eventId>`. */
  event_id: string;
  selection: number;
  at_ms: number;
  count: number;
}

export interface StockAuditsTable {
  machine_id: string;
  audit_id: string;
  selection: number;
  at: string;
  dex_vends: number;
  our_vends: number;
  correction: number;
}

export interface FillsTable {
  id: Generated<number>;
  machine_id: string;
  at: string;
  by_user: string;
  /** JSON {"<selection>": count}. */
  counts: string;
  note: string;
}

export interface RoutesTable {
  route_id: string;
  /** Visit weekdays, comma-separated, 0 = Sunday ('' = every day). */
  weekdays: string;
}

export interface RouteMachinesTable {
  route_id: string;
  position: number;
  machine_id: string;
}

export interface CatalogPushesTable {
  machine_id: string;
  version: number;
  prepared_at: string;
  prepared_by: string;
  document: string;
  /** The machine's refusal of this version, kept from its status (migration 0006b). */
  refused_reason?: string | null;
  refused_message?: string | null;
  refused_at?: string | null;
}

export interface RouteDatabase {
  products: ProductsTable;
  templates: TemplatesTable;
  template_selections: TemplateSelectionsTable;
  machine_templates: MachineTemplatesTable;
  selection_overrides: SelectionOverridesTable;
  stock: StockTable;
  stock_vends: StockVendsTable;
  stock_audits: StockAuditsTable;
  fills: FillsTable;
  routes: RoutesTable;
  route_machines: RouteMachinesTable;
  catalog_pushes: CatalogPushesTable;
}
