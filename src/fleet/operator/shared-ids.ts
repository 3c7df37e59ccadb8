/**
 * Identifiers two machines claim at once (docs/decisions/fleet-trust.md item 6): a TerminalId or UniQR in the retained
 * status of more than one online machine. The relay routes by the operator's signed registry and
 * ignores such a claim, but the operator should know: one of the machines is misconfigured, or its
 * broker account is in the wrong hands. Pure.
 */
import type { MachineRow } from './fleet-view.js';

export interface SharedIdentifier {
  kind: 'TerminalId' | 'UniQR';
  value: string;
  machineIds: string[];
}

export function sharedIdentifiers(rows: readonly MachineRow[]): SharedIdentifier[] {
  const claims = new Map<string, SharedIdentifier>();
  const claim = (kind: SharedIdentifier['kind'], value: string, machineId: string) => {
    const key = `${kind}\u0000${value}`;
    const entry = claims.get(key) ?? { kind, value, machineIds: [] };
    entry.machineIds.push(machineId);
    claims.set(key, entry);
  };
  for (const row of rows) {
    if (row.status?.online !== true) continue;
    claim('TerminalId', row.status.terminalId, row.machineId);
    if (row.status.uniQr !== null) claim('UniQR', row.status.uniQr, row.machineId);
  }
  return [...claims.values()].filter((c) => c.machineIds.length > 1);
}
