/**
 * The VMC behind an MDB adapter board, simulated. It answers the host's commands the way the
 * board does (docs/decisions/mdb-adapter.md) and plays the vending machine's part: enabling the reader,
 * selections, dispensing, cancels, resets. Tests, the demo, chaos runs and technicians drive it
 * through this class (or `qrvend sim vmc` and its line script).
 *
 * It speaks over any ByteLink: one end of a pty pair, or the in-memory wire's VMC end. The wire
 * (framing, writes, silence, noise) is board-wire.ts; the board's SETCONF store board-config.ts;
 * VMCs and boards as they are in the field (slots, a card reader, quirks) quirks.ts.
 */
import type { BoardCommand } from '../../mdb/codec/index.js';
import type { ByteLink } from '../../mdb/transport/index.js';
import { BoardWire } from './board-wire.js';
import type { SimSessionEnd, SimSessionRecord, SimVendOutcome, SimVendRecord } from './record.js';
import type { BoardFirmware, CardSaleRecord, VmcQuirks } from './quirks.js';
import { BoardConfig } from './board-config.js';

export type VendPolicy = 'manual' | 'success' | 'fail';

export interface VmcSimulatorOptions {
  /** Attach now; or later with attach(). */
  link?: ByteLink;
  /** r,ACK interval (the VMC's POLL as the board reports it). Default 100 ms. */
  pollIntervalMs?: number;
  firmware?: string;
  boardId?: string;
  decimalPlaces?: number;
  /** The VMC enables the reader as soon as it has set it up (default true). */
  autoEnable?: boolean;
  /** What happens after a vend is approved: wait for vendSuccess()/vendFailure(), or do it after vendDelayMs. */
  vendPolicy?: VendPolicy;
  vendDelayMs?: number;
  /** Seed for noise; default from the clock. */
  seed?: number;
  /** Host lines kept for inspection (default 10,000). */
  keepCommands?: number;
  /** The VMC's slots, a card reader beside us, field quirks (src/sim/vmc/quirks.ts). */
  quirks?: VmcQuirks;
  /** What the board's firmware knows of SETCONF. */
  firmwareKeys?: BoardFirmware;
}

export type SimReaderState = 'inactive' | 'disabled' | 'enabled';

interface CurrentVend {
  record: SimVendRecord;
  phase: 'requested' | 'approved';
}

/** Events: 'command' (BoardCommand, raw line) for each host command; 'sent' (line) for each line sent. */
export class VmcSimulator extends BoardWire {
  private hostEnabled = false;
  private reader: SimReaderState = 'inactive';
  private vmcWantsEnabled: boolean;
  private session: SimSessionRecord | null = null;
  private vend: CurrentVend | null = null;
  private readonly sessions: SimSessionRecord[] = [];
  private pollTimer: NodeJS.Timeout | null = null;
  private nextSessionId = 1;
  private vendPolicy: VendPolicy;
  private readonly o: Required<
    Omit<VmcSimulatorOptions, 'link' | 'seed' | 'vendPolicy' | 'autoEnable' | 'quirks' | 'firmwareKeys'>
  >;
  private readonly quirks: Required<VmcQuirks>;
  private readonly config: BoardConfig;
  private resetsAfterSetupLeft: number;
  private readonly cardSales: CardSaleRecord[] = [];
  private idleDropTimer: NodeJS.Timeout | null = null;

  constructor(options: VmcSimulatorOptions = {}) {
    super({
      decimalPlaces: options.decimalPlaces ?? 2,
      keepCommands: options.keepCommands ?? 10_000,
      seed: options.seed,
    });
    this.o = {
      pollIntervalMs: options.pollIntervalMs ?? 100,
      firmware: options.firmware ?? 'qrvend-sim-1.0',
      boardId: options.boardId ?? 'SIMVMC0001',
      decimalPlaces: options.decimalPlaces ?? 2,
      vendDelayMs: options.vendDelayMs ?? 20,
      keepCommands: options.keepCommands ?? 10_000,
    };
    this.quirks = {
      slots: options.quirks?.slots ?? ['0x10', '0x60'],
      cardReader: options.quirks?.cardReader ?? null,
      resetAfterSetup: options.quirks?.resetAfterSetup ?? 0,
      neverPolls: options.quirks?.neverPolls ?? false,
      dropIdleSessionMs: options.quirks?.dropIdleSessionMs ?? null,
      vendOutsideSession: options.quirks?.vendOutsideSession ?? false,
    };
    this.config = new BoardConfig(options.firmwareKeys);
    this.resetsAfterSetupLeft = this.quirks.resetAfterSetup;
    this.vmcWantsEnabled = options.autoEnable ?? true;
    this.vendPolicy = options.vendPolicy ?? 'manual';
    this.pollTimer = setInterval(() => {
      if (this.hostEnabled && this.vmcTalksToUs()) this.send({ kind: 'poll' });
    }, this.o.pollIntervalMs);
    if (options.link) this.attach(options.link);
  }

  /** Stops timers and closes the link. */
  async close(): Promise<void> {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = null;
    this.clearIdleDrop();
    await this.closeWire();
  }

  // ---- the VMC's side (what a consumer or the machine does) --------------------------------

  /** The VMC enables the reader (after setting it up if it was inactive). */
  enable(): boolean {
    this.vmcWantsEnabled = true;
    if (!this.hostEnabled || this.reader === 'enabled') return false;
    if (this.reader === 'inactive') this.setReader('disabled');
    this.setReader('enabled');
    return true;
  }

  /** The VMC disables the reader; an open session ends. */
  disable(): boolean {
    this.vmcWantsEnabled = false;
    if (this.reader !== 'enabled') return false;
    // a disable is no reset: not a dispense (MDB 4.2 7.4.7)
    this.dropVend(this.vend?.phase === 'approved' ? 'failed' : 'reset');
    this.closeRecord('disabled');
    this.setReader('disabled');
    return true;
  }

  /** The consumer selects an item: a vend request, inside a session or (always-idle) without one. */
  select(item: number, price: number): boolean {
    if (this.reader !== 'enabled' || this.vend !== null) return false;
    if (this.session === null) {
      if (!this.config.alwaysIdle && !this.quirks.vendOutsideSession) return false;
      this.session = this.openRecord('always-idle', null);
    }
    this.clearIdleDrop();
    const record: SimVendRecord = { item, price, approved: null, outcome: 'pending' };
    this.session.vends.push(record);
    this.vend = { record, phase: 'requested' };
    this.send({ kind: 'vend-request', price, item });
    return true;
  }

  /** The approved product came out. */
  vendSuccess(): boolean {
    if (this.vend?.phase !== 'approved') return false;
    this.vend.record.outcome = 'success';
    this.vend = null;
    this.send({ kind: 'vend-success' });
    this.afterAlwaysIdleVend();
    return true;
  }

  /** The approved product did not come out (c,ERR,VEND <code>, 3 = dispense failed). */
  vendFailure(code = 3): boolean {
    if (this.vend?.phase !== 'approved') return false;
    this.vend.record.outcome = 'failed';
    this.vend = null;
    this.send({ kind: 'vend-error', code });
    this.afterAlwaysIdleVend();
    return true;
  }

  /** The consumer cancels: a selection not yet approved is dropped, and the session ends. */
  cancel(): boolean {
    if (this.vend?.phase === 'approved') return false; // dispensing: too late to cancel
    if (this.vend !== null) {
      this.vend.record.outcome = 'cancelled';
      this.vend = null;
      this.send({ kind: 'vend-error', code: 1 });
    }
    if (this.session === null) return false;
    const wasFunded = this.session.kind === 'funded';
    this.closeRecord('consumer-cancel');
    if (wasFunded) this.send({ kind: 'status', status: 'ENABLED' });
    return true;
  }

  /** Session complete: the VMC ends the session (after the consumer is done). */
  endSession(): boolean {
    if (this.session === null || this.vend?.phase === 'approved') return false;
    if (this.vend !== null) {
      this.dropVend('cancelled');
      this.send({ kind: 'vend-error', code: 1 });
    }
    this.closeRecord('complete');
    this.send({ kind: 'status', status: 'ENABLED' });
    return true;
  }

  /** The VMC resets the reader, at any point: a vend in progress is reported as reset (c,ERR,VEND 5). */
  resetReader(): void {
    if (this.vend !== null) {
      this.vend.record.outcome = 'reset';
      this.vend = null;
      this.send({ kind: 'vend-error', code: 5 });
    }
    this.closeRecord('vmc-reset');
    this.setReader('inactive');
    this.later(5, () => this.setUp());
  }

  /** The board itself restarts: configuration and host enable are lost; it sends its boot banner. */
  resetBoard(): void {
    this.dropVend('reset');
    this.closeRecord('board-reset');
    this.config.clear();
    this.hostEnabled = false;
    this.reader = 'inactive';
    this.send({ kind: 'version', firmware: this.o.firmware, boardId: this.o.boardId });
  }

  /**
   * The consumer pays at the card reader at the other address: the VMC serves the selection there.
   * A selection of ours still waiting for payment is cancelled (c,ERR,VEND 1), our reader is
   * disabled while the other device vends and enabled again after. False without a card reader.
   */
  cardSale(item: number, price: number): boolean {
    if (this.quirks.cardReader === null || this.vend?.phase === 'approved') return false;
    const tookOurSelection = this.vend !== null;
    if (this.vend !== null) {
      this.vend.record.outcome = 'cancelled';
      this.vend = null;
      this.send({ kind: 'vend-error', code: 1 });
    }
    const wasEnabled = this.reader === 'enabled';
    if (wasEnabled) this.disable();
    this.cardSales.push({ item, price, tookOurSelection });
    if (wasEnabled) this.later(30, () => this.enable());
    return true;
  }

  /** Sales the card reader made. */
  cardSaleRecords(): CardSaleRecord[] {
    return structuredClone(this.cardSales);
  }

  setVendPolicy(policy: VendPolicy): void {
    this.vendPolicy = policy;
  }

  // ---- inspection --------------------------------------------------------------------------

  /** Every session so far (the open one last), deep-copied. */
  records(): SimSessionRecord[] {
    return structuredClone(this.sessions);
  }

  state(): {
    hostEnabled: boolean;
    reader: SimReaderState;
    session: boolean;
    vend: 'none' | 'requested' | 'approved';
    config: Record<string, string>;
  } {
    return {
      hostEnabled: this.hostEnabled,
      reader: this.reader,
      session: this.session !== null,
      vend: this.vend?.phase ?? 'none',
      config: this.config.snapshot(),
    };
  }

  // ---- the board's side: answering host commands --------------------------------------------

  protected onCommand(cmd: BoardCommand): void {
    switch (cmd.kind) {
      case 'version':
        return this.send({ kind: 'version', firmware: this.o.firmware, boardId: this.o.boardId });
      case 'enable':
        return cmd.enabled ? this.hostEnable() : this.hostDisable();
      case 'setconf':
        if (this.hostEnabled) return this.send({ kind: 'error', text: 'SETCONF -1' }); // only while disabled
        switch (this.config.set(cmd.key, cmd.value)) {
          case 'silent':
            return;
          case 'refused':
            // The board's documentation gives no text for an unknown key; any c,ERR answer is a refusal.
            return this.send({ kind: 'error', text: `SETCONF ${cmd.key}` });
          case 'ok':
            return this.send({ kind: 'set-ok' });
        }
        return;
      case 'start':
        if (!this.hostEnabled || this.reader !== 'enabled' || this.session !== null)
          return this.send({ kind: 'error', text: 'START -3' });
        this.session = this.openRecord('funded', cmd.funds);
        this.armIdleDrop();
        return this.send({ kind: 'session-idle', funds: cmd.funds });
      case 'vend-approve':
        if (this.vend?.phase !== 'requested') return this.send({ kind: 'error', text: 'CMD VEND' });
        this.vend.phase = 'approved';
        this.vend.record.approved = cmd.amount;
        if (this.vendPolicy !== 'manual') {
          const policy = this.vendPolicy;
          this.later(this.o.vendDelayMs, () => (policy === 'success' ? this.vendSuccess() : this.vendFailure(3)));
        }
        return;
      case 'vend-deny':
        if (this.vend?.phase !== 'requested') return this.send({ kind: 'error', text: 'CMD VEND' });
        this.vend.record.outcome = 'denied';
        this.vend = null;
        this.afterAlwaysIdleVend();
        return;
      case 'stop':
        if (this.session === null || this.vend?.phase === 'approved')
          return this.send({ kind: 'error', text: 'STOP -1' });
        this.dropVend('denied');
        this.closeRecord('reader-stop');
        return this.send({ kind: 'status', status: 'ENABLED' });
    }
  }

  private hostEnable(): void {
    this.hostEnabled = true;
    this.send({ kind: 'enable-echo', enabled: true });
    this.reader = 'inactive';
    this.send({ kind: 'status', status: 'INACTIVE' });
    this.later(5, () => this.setUp());
  }

  private hostDisable(): void {
    this.dropVend(this.vend?.phase === 'approved' ? 'failed' : 'reset');
    this.closeRecord('reader-off');
    this.hostEnabled = false;
    this.reader = 'inactive';
    this.send({ kind: 'enable-echo', enabled: false });
  }

  /** The VMC's SETUP after a reset: the reader becomes disabled, then enabled if the VMC wants it. */
  private setUp(): void {
    if (!this.hostEnabled || this.reader !== 'inactive' || !this.vmcTalksToUs()) return;
    this.setReader('disabled');
    if (!this.vmcWantsEnabled) return;
    this.setReader('enabled');
    if (this.resetsAfterSetupLeft !== 0) {
      // A VMC that does not like what SETUP told it starts over (seen with level mismatches).
      if (this.resetsAfterSetupLeft > 0) this.resetsAfterSetupLeft -= 1;
      this.later(20, () => this.resetReader());
    }
  }

  // The board answers at the configured address; the VMC talks to it only in an enabled slot, and never where a card
  // reader answers too.
  private vmcTalksToUs(): boolean {
    const address = this.config.address;
    if (this.quirks.neverPolls) return false;
    return (this.quirks.slots as readonly string[]).includes(address) && this.quirks.cardReader !== address;
  }

  private armIdleDrop(): void {
    const ms = this.quirks.dropIdleSessionMs;
    if (ms === null) return;
    this.clearIdleDrop();
    this.idleDropTimer = setTimeout(() => {
      this.idleDropTimer = null;
      if (this.session !== null && this.vend === null && this.session.vends.length === 0) this.endSession();
    }, ms);
  }

  private clearIdleDrop(): void {
    if (this.idleDropTimer) clearTimeout(this.idleDropTimer);
    this.idleDropTimer = null;
  }

  private setReader(state: SimReaderState): void {
    this.reader = state;
    this.send({
      kind: 'status',
      status: state === 'inactive' ? 'INACTIVE' : state === 'disabled' ? 'DISABLED' : 'ENABLED',
    });
  }

  private afterAlwaysIdleVend(): void {
    if (this.session?.kind === 'always-idle') this.closeRecord('complete');
  }

  private dropVend(outcome: SimVendOutcome): void {
    if (this.vend === null) return;
    this.vend.record.outcome = outcome;
    this.vend = null;
  }

  private openRecord(kind: SimSessionRecord['kind'], funds: number | null): SimSessionRecord {
    const record: SimSessionRecord = { id: this.nextSessionId++, kind, funds, vends: [], end: 'open' };
    this.sessions.push(record);
    return record;
  }

  private closeRecord(end: SimSessionEnd): void {
    if (this.session === null) return;
    this.session.end = end;
    this.session = null;
  }
}
