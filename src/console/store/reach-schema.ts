/**
 * The tables of the console's reach (migration 0007, ./reach-migration.ts; docs/console.md
 * "Alert rules", "Webhooks", "The API"): the event feed's positions, alert rules and what each
 * knows of its machines, webhook endpoints, the delivery queue and its log, API tokens.
 */
import type { Generated } from 'kysely';

/** The feed's last position handed out (one row, `events`): taken last in an ingest transaction. */
export interface FeedHeadTable {
  name: string;
  last: number;
}

/** Each stored event's place in the feed, in the order the console committed them. */
export interface FeedTable {
  position: number;
  machine_id: string;
  event_id: string;
}

export interface AlertRulesTable {
  id: Generated<number>;
  owner: string;
  name: string;
  /** One of CONDITION_KINDS (src/console/alerts/conditions.ts). */
  condition: string;
  /** For `alarm`: the code, '' for any. */
  alarm_code: string;
  /** For `offline` and `no-sale`: minutes (offline longer than, no sale for this much business time). */
  threshold_minutes: number;
  /** Machine ids, comma-separated; '' for every machine. */
  machines: string;
  /** A route whose machines the rule watches too ('' none; with no machines either, every machine). */
  route_id: string;
  /** ISO weekdays the rule speaks on, comma-separated (1 = Monday). */
  days: string;
  /** Minutes of the day in `time_zone`: the hours the rule speaks in, [from, to). */
  from_minute: number;
  to_minute: number;
  time_zone: string;
  hold_minutes: number;
  /** 0: say it once. */
  repeat_minutes: number;
  notify_cleared: number;
  email: number;
  endpoint_id: number | null;
  enabled: number;
  created_at: string;
  updated_at: string;
}

/** What a rule knows of one machine whose condition holds (or held and was told). */
export interface AlertStatesTable {
  rule_id: number;
  machine_id: string;
  /** Since when the condition holds (the alarm raised, the machine offline, its last sale). */
  since: string;
  detail: string;
  /** When this rule first saw it hold: the hold time counts from here. */
  first_seen_at: string;
  /** When the owner was told it holds; null while it has not been (hold time, outside hours). */
  told_at: string | null;
  last_sent_at: string | null;
  sent_count: number;
  /** It stopped holding after the owner was told, outside the rule's hours: the clear is said when they open. */
  cleared_at: string | null;
}

export interface WebhookEndpointsTable {
  id: Generated<number>;
  owner: string;
  url: string;
  /** `whsec_` and the key in base64 (Standard Webhooks); needed to sign, so kept as it is. */
  secret: string;
  /** Receives the event feed. */
  events: number;
  /** Receives alert notifications of the rules that name it. */
  alerts: number;
  enabled: number;
  disabled_reason: string | null;
  /** The feed position delivered (acknowledged by the receiver) and the one queued. */
  feed_cursor: number;
  feed_queued: number;
  created_at: string;
}

export interface DeliveriesTable {
  /** The `webhook-id` (or the e-mail's Message-ID): the same on every attempt. */
  id: string;
  channel: string;
  endpoint_id: number | null;
  /** The e-mail address, for e-mail. */
  recipient: string | null;
  /** `events`, `alert`, `notice`. */
  kind: string;
  owner: string | null;
  rule_id: number | null;
  machine_id: string | null;
  /** The exact body sent (webhooks) or `{subject, text}` (e-mail), fixed when queued. */
  payload: string;
  feed_from: number | null;
  feed_to: number | null;
  created_ms: number;
  state: string;
  attempts: number;
  next_ms: number;
  claim_token: string | null;
  claim_until_ms: number | null;
  last_error: string | null;
  done_ms: number | null;
}

export interface DeliveryAttemptsTable {
  id: Generated<number>;
  delivery_id: string;
  endpoint_id: number | null;
  at_ms: number;
  instance: string;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export interface ApiTokensTable {
  id: Generated<number>;
  name: string;
  /** The first characters of the token, to tell tokens apart on the page. */
  prefix: string;
  /** SHA-256 of the token: the token itself is shown once and never stored. */
  token_hash: string;
  created_by: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** Requests per API token and window, counted across instances. */
export interface ApiRateTable {
  key: string;
  count: number;
  window_start_ms: number;
}

/** Work one instance does at a time (the alert evaluation): who holds it, until when. */
export interface LeasesTable {
  name: string;
  holder: string;
  until_ms: number;
}

export interface ReachDatabase {
  feed_head: FeedHeadTable;
  feed: FeedTable;
  alert_rules: AlertRulesTable;
  alert_states: AlertStatesTable;
  webhook_endpoints: WebhookEndpointsTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  api_tokens: ApiTokensTable;
  api_rate: ApiRateTable;
  leases: LeasesTable;
}
