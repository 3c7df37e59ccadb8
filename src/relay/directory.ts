/**
 * Which machine a Start is for, and whether it can take it now (docs/decisions/fleet-link.md, "Start relay").
 *
 * Identity comes from the operator's signed registry (registry.ts): TerminalId and UniQR map to a
 * machineId there and nowhere else. The machines' retained `status` (each online status carries
 * machineId, terminalId, uniQr and acceptsRelayedStart; a machine that went away leaves
 * `{"online": false}`, its last will) says only whether the machine is online and takes relayed
 * Starts. What a status claims is compared with the registry: a claim of an identifier the
 * registry gives to another machine is an impostor's (docs/decisions/fleet-trust.md item 6): ignored, logged at warn
 * once per claim, and counted (`claims.impostor`, /healthz); a machine the registry does not list
 * is never routed to (`claims.unregistered`).
 *
 * Only the machine is believed (docs/relay.md, "What the relay believes"): a registered machine's
 * status counts only when signed with one of its registry keys (src/trust/machine-sig.ts), within
 * its window, and newer in the machine's own order than the one held. Anything else (unsigned, an
 * empty retained message, another key, a replay) is refused, counted per reason (`statusRefused`)
 * and logged; the status held stays. A held status past its window is no longer believed: the
 * machine is offline until it signs a new one.
 *
 * Nothing here is stored: a replica rebuilds the statuses from the broker's retained messages when
 * it (re)subscribes, so any replica answers any Start. Bounded: at most `maxMachines` statuses.
 */
import type { Logger } from '../core/log.js';
import { RepeatedLog } from '../core/log-limiter.js';
import { StatusMessage } from '../fleet/contract/messages.js';
import { CLOCK_SKEW_MS } from '../trust/signed.js';
import { keyFingerprint } from '../trust/key-owner.js';
import { checkMachineStatus, statusIsNewer } from '../trust/machine-sig.js';
import type { MachineRefusal, MachineSig, StatusFacts } from '../trust/machine-sig.js';
import type { Registry } from './registry.js';

export interface MachineEntry {
  machineId: string;
  online: boolean;
  acceptsRelayedStart: boolean;
  /** The registry gives this machine no key: nothing it says is believed, its Starts are answered 30. */
  keyless?: true;
}

const OFFLINE = { online: false, acceptsRelayedStart: false } as const;
const pick = (s: { acceptsRelayedStart: boolean; terminalId: string; uniQr: string | null }) => ({
  acceptsRelayedStart: s.acceptsRelayedStart,
  terminalId: s.terminalId,
  uniQr: s.uniQr,
});

/** Why a status was not believed: a signature refusal, or older than the one held. */
export type StatusRefusal = MachineRefusal | 'stale';

interface Held extends MachineEntry {
  claim: string;
  /** The machine's signature over it, checked; absent for an unregistered machine (never routed to). */
  sig?: MachineSig;
  /** The fingerprint of the registry key that checked `sig` (an id is only a name: rejudge compares keys). */
  keyPrint?: string;
  /** An unregistered machine's status, kept unchecked: checked if a new registry lists the machine. */
  unchecked?: { facts: StatusFacts; rawSig: unknown };
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
  private readonly machines = new Map<string, Held>();
  /** Statuses not believed, per reason. */
  readonly statusRefused: Partial<Record<StatusRefusal, number>> = {};
  private readonly refusalLog: RepeatedLog;
  /** Status messages dropped: unreadable, or beyond maxMachines. */
  readonly dropped = { invalid: 0, full: 0 };
  readonly claims: ClaimCounters = { impostor: 0, unregistered: 0, mismatched: 0 };
  /** machineId -> what it claimed that belongs to another machine (for /healthz). */
  readonly impostors = new Map<string, string>();

  constructor(
    private readonly maxMachines: number,
    private readonly registry: () => Registry,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.refusalLog = new RepeatedLog({
      intervalMs: 60_000,
      write: (fields, repeated) => {
        const why = `machine status not believed (${String(fields.reason)}): ${String(fields.why)}`;
        log.warn({ event: 'relay.status.refused', ...fields, repeated }, why);
      },
    });
  }

  private refuse(machineId: string, reason: StatusRefusal, why: string): void {
    this.statusRefused[reason] = (this.statusRefused[reason] ?? 0) + 1;
    this.refusalLog.add({ machineId, reason, why: why.slice(0, 200) });
  }

  get size(): number {
    return this.machines.size;
  }

  get onlineCount(): number {
    let n = 0;
    for (const m of this.machines.values()) {
      if (m.online && (m.unchecked !== undefined || (m.sig !== undefined && this.believable(m.sig)))) n += 1;
    }
    return n;
  }

  /**
   * A retained `status` message of `machineId` (already known to be a valid topic level). An empty
   * one (a retained message cleared) is unsigned like any other: the status held stays until its
   * window ends.
   */
  update(machineId: string, payload: Buffer): void {
    let raw: unknown;
    let parsed: StatusMessage;
    try {
      raw = payload.length === 0 ? null : JSON.parse(payload.toString('utf8'));
      if (raw === null) return this.refuse(machineId, 'unsigned', 'an empty retained status (cleared by someone)');
      const checked = StatusMessage.safeParse(raw);
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
    if (parsed.online && parsed.machineId !== machineId) {
      // A status naming another machine than its topic: the broker ACL should prevent it; never trust it.
      this.dropped.invalid += 1;
      return;
    }
    const facts: StatusFacts = parsed.online
      ? { online: true, ...pick(parsed) }
      : { online: false, acceptsRelayedStart: false, terminalId: null, uniQr: null };
    const registry = this.registry();
    if (!registry.byMachineId.has(machineId)) return this.unregistered(machineId, facts, parsed.machineSig, existing);
    this.believe(registry, machineId, facts, parsed.machineSig, existing);
  }

  /** Checks a registered machine's status and keeps it if it is signed, in its window and newer than the one held. */
  private believe(registry: Registry, machineId: string, facts: StatusFacts, rawSig: unknown, existing?: Held): void {
    const checked = checkMachineStatus(machineId, facts, rawSig, registry.keysOf(machineId), this.now());
    if (!checked.ok) return this.refuse(machineId, checked.reason, checked.message);
    if (existing?.sig !== undefined && this.believable(existing.sig) && !statusIsNewer(checked.sig, existing.sig)) {
      const { boot, conn, seq } = checked.sig;
      const where = `boot ${boot.slice(0, 8)}, connection ${conn}, ${seq}`;
      return this.refuse(machineId, 'stale', `older than the status held (${where}): a replay`);
    }
    const keyPrint = keyPrintOf(registry, machineId, checked.sig);
    if (!facts.online) {
      this.machines.set(machineId, { ...OFFLINE, machineId, claim: existing?.claim ?? '', sig: checked.sig, keyPrint });
      return;
    }
    const claim = `${facts.terminalId}\u0000${facts.uniQr ?? ''}`;
    if (existing?.claim !== claim) this.judgeClaim(machineId, facts.terminalId!, facts.uniQr);
    const { acceptsRelayedStart } = facts;
    this.machines.set(machineId, { machineId, online: true, acceptsRelayedStart, claim, sig: checked.sig, keyPrint });
  }

  /** A machine the registry does not list: never routed to, but what it claims is still judged (an alarm). */
  private unregistered(machineId: string, facts: StatusFacts, rawSig: unknown, existing: Held | undefined): void {
    const unchecked = { facts, rawSig };
    if (!facts.online) {
      this.machines.set(machineId, { ...OFFLINE, machineId, claim: existing?.claim ?? '', unchecked });
      return;
    }
    const claim = `${facts.terminalId}\u0000${facts.uniQr ?? ''}`;
    if (existing?.claim !== claim) this.judgeClaim(machineId, facts.terminalId!, facts.uniQr);
    const { acceptsRelayedStart } = facts;
    this.machines.set(machineId, { machineId, online: true, acceptsRelayedStart, claim, unchecked });
  }

  /** Whether a held signature is still within its window (with the skew). */
  private believable(sig: MachineSig): boolean {
    return this.now() <= sig.signature.expiresAt + CLOCK_SKEW_MS;
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
      this.log.warn(
        { machineId, claims: foreign, event: 'relay.impostor' },
        `machine ${machineId} claims identifiers the registry gives to another machine (${foreign.join(', ')}): ` +
          `ignored; check that machine's configuration and broker account`,
      );
      return;
    }
    this.impostors.delete(machineId);
    if (own === undefined) {
      this.claims.unregistered += 1;
      this.log.warn(
        { machineId, event: 'relay.unregistered' },
        `machine ${machineId} is not in the registry: no Start is routed to it until the operator adds it`,
      );
    } else if (own.terminalId !== terminalId || (uniQr !== null && own.uniQr !== uniQr)) {
      this.claims.mismatched += 1;
      this.log.warn(
        { machineId, event: 'relay.mismatch' },
        `machine ${machineId} answers to identifiers other than its registry entry: Starts are routed by the registry`,
      );
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
    if (registry.byMachineId.get(machineId)?.machineKeys === undefined) {
      return { kind: 'found', machine: { ...OFFLINE, machineId, keyless: true } };
    }
    const status = this.machines.get(machineId);
    // Only a signed status within its window says the machine is there.
    const believed = status?.sig !== undefined && this.believable(status.sig);
    if (status === undefined || !believed) return { kind: 'found', machine: { ...OFFLINE, machineId } };
    return {
      kind: 'found',
      machine: { machineId, online: status.online, acceptsRelayedStart: status.acceptsRelayedStart },
    };
  }

  /**
   * The registry was read anew: a status signed by a key the registry no longer gives its machine
   * is forgotten (a rotated-out key speaks for nobody), compared as keys, not ids (an id given to
   * another key is another key), and every online machine's claim is judged again (raised or cleared).
   */
  rejudge(): void {
    this.impostors.clear();
    const registry = this.registry();
    for (const [machineId, m] of this.machines) {
      if (m.sig !== undefined) {
        const print = keyPrintOf(registry, machineId, m.sig);
        if (print === undefined || print !== m.keyPrint) this.machines.delete(machineId);
      }
      // A machine the registry lists now: what it said while unlisted is checked like a new status.
      if (m.unchecked !== undefined && registry.byMachineId.has(machineId)) {
        this.machines.delete(machineId);
        this.believe(registry, machineId, m.unchecked.facts, m.unchecked.rawSig, undefined);
      }
    }
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

/** The fingerprint of the registry's key for `machineId` under the id `sig` names, or undefined when it lists none. */
function keyPrintOf(registry: Registry, machineId: string, sig: MachineSig): string | undefined {
  const key = registry.keysOf(machineId)?.byId.get(sig.signature.keyId);
  return key === undefined ? undefined : keyFingerprint(key.key);
}
