/**
 * The operator's picture of the fleet, built from decoded messages: one row per machine (its
 * retained status, the last sale seen, the last health), the malformed messages counted by
 * reason, and repeated events (same eventId: QoS 1 redelivery, a device's retry after an outage)
 * recognised so each is shown once. Pure: no I/O, no clock.
 */
import type { FleetEvent, HealthMessage, SaleEvent, StatusMessage } from '../contract/index.js';
import type { BadReason, Decoded } from './decode.js';

export interface MachineRow {
  machineId: string;
  status: StatusMessage | null;
  lastSale: Pick<SaleEvent, 'at' | 'amount' | 'currency' | 'txId' | 'verdict'> | null;
  lastHealth: HealthMessage | null;
}

export interface BadCounts {
  total: number;
  byReason: Partial<Record<BadReason, number>>;
  /** The last few, for a diagnostic line (machine, topic, reason, detail). */
  recent: { machineId: string | null; topic: string; reason: BadReason; detail: string }[];
}

/** How many eventIds are remembered for deduplication. */
export const SEEN_EVENT_IDS = 10_000;

export type Applied =
  | { kind: 'status'; row: MachineRow; previous: StatusMessage | null }
  | { kind: 'event'; event: FleetEvent; duplicate: boolean }
  | { kind: 'other' };

export class FleetView {
  readonly machines = new Map<string, MachineRow>();
  readonly bad: BadCounts = { total: 0, byReason: {}, recent: [] };
  duplicates = 0;
  private readonly seen = new Set<string>();

  private row(machineId: string): MachineRow {
    let row = this.machines.get(machineId);
    if (!row) {
      row = { machineId, status: null, lastSale: null, lastHealth: null };
      this.machines.set(machineId, row);
    }
    return row;
  }

  apply(message: Decoded): Applied {
    switch (message.kind) {
      case 'status': {
        const row = this.row(message.machineId);
        const previous = row.status;
        row.status = message.status;
        return { kind: 'status', row, previous };
      }
      case 'removed':
        this.machines.delete(message.machineId);
        return { kind: 'other' };
      case 'health':
        this.row(message.machineId).lastHealth = message.health;
        return { kind: 'other' };
      case 'event': {
        const { event } = message;
        const key = `${message.machineId}\u0000${event.eventId}`;
        if (this.seen.has(key)) {
          this.duplicates += 1;
          return { kind: 'event', event, duplicate: true };
        }
        this.seen.add(key);
        if (this.seen.size > SEEN_EVENT_IDS) this.seen.delete(this.seen.values().next().value as string);
        if (event.kind === 'sale') {
          const row = this.row(message.machineId);
          row.lastSale = {
            at: event.at,
            amount: event.amount,
            currency: event.currency,
            txId: event.txId,
            verdict: event.verdict,
          };
        }
        return { kind: 'event', event, duplicate: false };
      }
      case 'bad': {
        this.bad.total += 1;
        this.bad.byReason[message.reason] = (this.bad.byReason[message.reason] ?? 0) + 1;
        this.bad.recent.push({
          machineId: message.machineId,
          topic: message.topic,
          reason: message.reason,
          detail: message.detail,
        });
        if (this.bad.recent.length > 5) this.bad.recent.shift();
        return { kind: 'other' };
      }
      default:
        return { kind: 'other' };
    }
  }

  /** Rows sorted by machine id. */
  rows(): MachineRow[] {
    return [...this.machines.values()].sort((a, b) =>
      a.machineId < b.machineId ? -1 : a.machineId > b.machineId ? 1 : 0,
    );
  }
}
