/** Contract-valid fleet payloads for the operator's unit tests. */
import type { AlarmEvent, SaleEvent, StatusMessage } from '../../../src/fleet/contract/index.js';

export function onlineStatus(
  machineId: string,
  change: Partial<Extract<StatusMessage, { online: true }>> = {},
): StatusMessage {
  return {
    online: true,
    machineId,
    terminalId: machineId,
    uniQr: null,
    version: '0.1.0',
    startedAt: '2026-11-23T03:00:00.000Z',
    reader: 'enabled',
    readerDisabledRemotely: false,
    gateway: 'online',
    outbox: { pending: 0, dead: 0 },
    alarms: [],
    acceptsRelayedStart: false,
    at: '2026-11-23T04:00:00.000Z',
    ...change,
  };
}

export function sale(machineId: string, eventId: string): SaleEvent {
  return {
    kind: 'sale',
    eventId,
    at: '2026-11-23T04:01:02.345Z',
    machineId,
    txId: 'tx-1',
    flow: 'static',
    amount: '1.50',
    currency: 'ILS',
    products: [{ item: 12, price: '1.50', outcome: 'vended' }],
    closing: 'settlement',
    verdict: 'accepted',
  };
}

export function alarm(
  machineId: string,
  eventId: string,
  state: 'raised' | 'cleared',
  detail: string | null = null,
): AlarmEvent {
  return { kind: 'alarm', eventId, at: '2026-11-23T04:05:00Z', machineId, code: 'GATEWAY_UNREACHABLE', state, detail };
}
