/**
 * Which machine a Start is for, and whether it can take it now (design section 10, "Start relay").
 *
 * Identity comes from the operator's signed registry (registry.ts): TerminalId and UniQR map to a
 * machineId there and nowhere else. The machines' retained `status` (each online status carries
 * machineId, terminalId, uniQr and acceptsRelayedStart; a machine that went away leaves
 * `{"online": false}`, its last will) says only whether the machine is online and takes relayed
 * Starts. What a status claims is compared with the registry: a claim of an identifier the
 * registry gives to another machine is an impostor's (issue 31 item 6): ignored, logged at warn
 * once per claim, and counted (`claims.impostor`, /healthz); a machine the registry does not list
 * is never routed to (`claims.unregistered`).
 *
 * Nothing here is stored: a replica rebuilds the statuses from the broker's retained messages when
 * it (re)subscribes, so any replica answers any Start. Bounded: at most `maxMachines` statuses.
 */
import type { Logger } from '../core/log.js';
import { StatusMessage } from '../fleet/contract/messages.js';
import type { Registry } from './registry.js';

export interface MachineEntry {
  machineId: string;
  online: boolean;
  acceptsRelayedStart: boolean;
}

export type Lookup =
  | { kind: 'found'; machine: MachineEntry }
  /** The registry gives these identifiers to no machine. */
  | { kind: 'unknown' }
  /** TerminalId and UniQR name two different machines: no machine is named by both. */
  | { kind: 'conflict' };

export interface ClaimCounters {
  /** Statuses claiming a TerminalId or UniQR the registry gives to another machine. */
  impostor: number;
  /** Statuses of machines the registry does not list. */
  unregistered: number;
  /** Statuses whose own identifiers differ from the registry's entry (no other machine's). */
  mismatched: number;
}

export class MachineDirectory {
  private readonly machines = new Map<string, MachineEntry & { claim: string }>();
  /** Status messages dropped: unreadable, or beyond maxMachines. */
  readonly dropped = { invalid: 0, full: 0 };
  readonly claims: ClaimCounters = { impostor: 0, unregistered: 0, mismatched: 0 };
  /** machineId -> what it claimed that belongs to another machine (for /healthz). */
  readonly impostors = new Map<string, string>();

  constructor(
    private readonly maxMachines: number,
    private readonly registry: () => Registry,
    private readonly log: Logger,
  ) {}

  get size(): number {
    return this.machines.size;
  }

  get onlineCount(): number {
    let n = 0;
    for (const m of this.machines.values()) if (m.online) n += 1;
    return n;
  }

  /** A retained `status` message of `machineId` (already known to be a valid topic level). Empty = cleared. */
  update(machineId: string, payload: Buffer): void {
    if (payload.length === 0) {
      this.machines.delete(machineId);
      this.impostors.delete(machineId);
      return;
    }
    let parsed: StatusMessage;
    try {
      const checked = StatusMessage.safeParse(JSON.parse(payload.toString('utf8')));
      if (!checked.success) throw new Error('schema');
      parsed = checked.data;
    } catch {
      this.dropped.invalid += 1;
      return;
    }
    const existing = this.machines.get(machineId);
    if (existing === undefined && this.machines.size >= this.maxMachines) {
      this.dropped.full += 1;
      return;
    }
    if (!parsed.online) {
      this.machines.set(machineId, { machineId, online: false, acceptsRelayedStart: false, claim: existing?.claim ?? '' });
      return;
    }
    if (parsed.machineId !== machineId) {
      // A status naming another machine than its topic: the broker ACL should prevent it; never trust it.
      this.dropped.invalid += 1;
      return;
    }
    const claim = `${parsed.terminalId}\u0000${parsed.uniQr ?? ''}`;
    if (existing?.claim !== claim) this.judgeClaim(machineId, parsed.terminalId, parsed.uniQr);
    this.machines.set(machineId, { machineId, online: true, acceptsRelayedStart: parsed.acceptsRelayedStart, claim });
  }

  /** Compares what a status claims with the registry; counted and logged once per new claim. */
  private judgeClaim(machineId: string, terminalId: string, uniQr: string | null): void {
    const registry = this.registry();
    const own = registry.byMachineId.get(machineId);
    const foreign: string[] = [];
    const terminalOwner = registry.byTerminalId.get(terminalId);
    if (terminalOwner !== undefined && terminalOwner !== machineId) foreign.push(`TerminalId of ${terminalOwner}`);
    const qrOwner = uniQr === null ? undefined : registry.byUniQr.get(uniQr);
    if (qrOwner !== undefined && qrOwner !== machineId) foreign.push(`UniQR of ${qrOwner}`);
    if (foreign.length > 0) {
      this.claims.impostor += 1;
      this.impostors.set(machineId, foreign.join(', '));
      this.log.warn({ machineId, claims: foreign, event: 'relay.impostor' }, `machine ${machineId} claims identifiers the registry gives to another machine (${foreign.join(', ')}): ignored; check that machine's configuration and broker account`);
      return;
    }
    this.impostors.delete(machineId);
    if (own === undefined) {
      this.claims.unregistered += 1;
      this.log.warn({ machineId, event: 'relay.unregistered' }, `machine ${machineId} is not in the registry: no Start is routed to it until the operator adds it`);
    } else if (own.terminalId !== terminalId || (uniQr !== null && own.uniQr !== uniQr)) {
      this.claims.mismatched += 1;
      this.log.warn({ machineId, event: 'relay.mismatch' }, `machine ${machineId} answers to identifiers other than its registry entry: Starts are routed by the registry`);
    }
  }

  /**
   * The machine a Start names, by the registry. Both identifiers, when both are given, must name
   * the same one. A machine of the registry the relay has no status of is offline.
   */
  find(terminalId: string | undefined, uniQr: string | undefined): Lookup {
    const registry = this.registry();
    const byTerminal = terminalId === undefined ? undefined : registry.byTerminalId.get(terminalId);
    const byQr = uniQr === undefined ? undefined : registry.byUniQr.get(uniQr);
    if (terminalId !== undefined && byTerminal === undefined) return { kind: 'unknown' };
    // A UniQR the registry does not list, with a TerminalId it does: the machine judges it (it answers 50 itself).
    if (uniQr !== undefined && byQr === undefined && byTerminal === undefined) return { kind: 'unknown' };
    if (byTerminal !== undefined && byQr !== undefined && byTerminal !== byQr) return { kind: 'conflict' };
    const machineId = (byTerminal ?? byQr)!;
    const status = this.machines.get(machineId);
    if (status === undefined) return { kind: 'found', machine: { machineId, online: false, acceptsRelayedStart: false } };
    return { kind: 'found', machine: { machineId, online: status.online, acceptsRelayedStart: status.acceptsRelayedStart } };
  }

  /** The registry changed: every online machine's claim is judged again (raised or cleared). */
  rejudge(): void {
    this.impostors.clear();
    for (const m of this.machines.values()) {
      if (!m.online || m.claim === '') continue;
      const [terminalId, uniQr] = m.claim.split('\u0000') as [string, string];
      this.judgeClaim(m.machineId, terminalId, uniQr === '' ? null : uniQr);
    }
  }

  /** Everything forgotten (a fresh subscription re-delivers the retained statuses). */
  clear(): void {
    this.machines.clear();
    this.impostors.clear();
  }
}
