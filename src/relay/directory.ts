/**
 * Which machine a Start is for, from the machines' retained `status` (design section 10): each
 * online status carries machineId, terminalId, uniQr and acceptsRelayedStart; a machine that went
 * away leaves `{"online": false}` (its last will). Nothing here is stored: a replica rebuilds the
 * map from the broker's retained messages when it (re)subscribes, so any replica answers any Start.
 *
 * Bounded: at most `maxMachines` machines; a status for one more is dropped and counted.
 */
import { StatusMessage } from '../fleet/contract/messages.js';

export interface MachineEntry {
  machineId: string;
  terminalId: string | null;
  uniQr: string | null;
  online: boolean;
  acceptsRelayedStart: boolean;
}

export type Lookup =
  | { kind: 'found'; machine: MachineEntry }
  /** Nothing the relay knows carries these identifiers. */
  | { kind: 'unknown' }
  /** TerminalId and UniQR name two different machines: no machine is named by both. */
  | { kind: 'conflict' };

export class MachineDirectory {
  private readonly machines = new Map<string, MachineEntry>();
  private readonly byTerminalId = new Map<string, string>();
  private readonly byUniQr = new Map<string, string>();
  /** Status messages dropped: unreadable, or beyond maxMachines. */
  readonly dropped = { invalid: 0, full: 0 };

  constructor(private readonly maxMachines: number) {}

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
      this.remove(machineId);
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
      // The last will carries no identifiers: keep what an earlier status said.
      const entry = existing ?? { machineId, terminalId: null, uniQr: null, online: false, acceptsRelayedStart: false };
      this.machines.set(machineId, { ...entry, online: false, acceptsRelayedStart: false });
      return;
    }
    if (parsed.machineId !== machineId) {
      // A status naming another machine than its topic: the broker ACL should prevent it; never trust it.
      this.dropped.invalid += 1;
      return;
    }
    this.unindex(existing);
    const entry: MachineEntry = {
      machineId,
      terminalId: parsed.terminalId,
      uniQr: parsed.uniQr,
      online: true,
      acceptsRelayedStart: parsed.acceptsRelayedStart,
    };
    this.machines.set(machineId, entry);
    this.byTerminalId.set(parsed.terminalId, machineId);
    if (parsed.uniQr !== null) this.byUniQr.set(parsed.uniQr, machineId);
  }

  /**
   * The machine a Start names. Both identifiers, when both are given, must name the same one.
   * A machine known only by its last will (this replica never saw it online) is found by its
   * machineId, which is the TerminalId unless the operator set fleet.machineId.
   */
  find(terminalId: string | undefined, uniQr: string | undefined): Lookup {
    const byTerminal = terminalId === undefined ? undefined : (this.byTerminalId.get(terminalId) ?? (this.machines.has(terminalId) ? terminalId : undefined));
    const byQr = uniQr === undefined ? undefined : this.byUniQr.get(uniQr);
    if ((terminalId !== undefined && byTerminal === undefined) || (uniQr !== undefined && byQr === undefined)) {
      // A UniQR the relay has not seen may still belong to the machine a known TerminalId names.
      if (byTerminal !== undefined && uniQr !== undefined && byQr === undefined) return this.entry(byTerminal);
      return { kind: 'unknown' };
    }
    if (byTerminal !== undefined && byQr !== undefined && byTerminal !== byQr) return { kind: 'conflict' };
    const id = byTerminal ?? byQr;
    return id === undefined ? { kind: 'unknown' } : this.entry(id);
  }

  private entry(machineId: string): Lookup {
    const machine = this.machines.get(machineId);
    return machine === undefined ? { kind: 'unknown' } : { kind: 'found', machine };
  }

  private remove(machineId: string): void {
    this.unindex(this.machines.get(machineId));
    this.machines.delete(machineId);
  }

  private unindex(entry: MachineEntry | undefined): void {
    if (entry === undefined) return;
    if (entry.terminalId !== null && this.byTerminalId.get(entry.terminalId) === entry.machineId) this.byTerminalId.delete(entry.terminalId);
    if (entry.uniQr !== null && this.byUniQr.get(entry.uniQr) === entry.machineId) this.byUniQr.delete(entry.uniQr);
  }

  /** Everything forgotten (a fresh subscription re-delivers the retained statuses). */
  clear(): void {
    this.machines.clear();
    this.byTerminalId.clear();
    this.byUniQr.clear();
  }
}
