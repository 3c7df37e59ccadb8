/**
 * The commands on the machine's own `cmd/+` (docs/fleet.md, "Signed commands"): bounded by budgets,
 * checked against the operator keys and the nonce book, served by the fleet worker itself or by the
 * payment worker (those that need the ledger or the reader), answered on the reply topic.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { IClientPublishOptions, IPublishPacket, MqttClient } from 'mqtt';
import type { QrvendConfig } from '../../config/schema.js';
import type { Logger } from '../../core/log.js';
import { RepeatedLog } from '../../core/log-limiter.js';
import { loadKeyring, TrustFileError, type Keyring } from '../../trust/keys.js';
import { NonceBook } from '../../trust/nonce-book.js';
import type { FleetToPayment, PaymentToFleet } from '../../ipc/messages.js';
import type { CommandName, MachineTopics } from '../contract/topics.js';
import { COMMAND_ERROR_CODES, MAX_PAYLOAD_BYTES, type CommandReply } from '../contract/messages.js';
import { parseCommand, type CommandErrorCode, type ParsedCommand, type ReplyRoute } from './command-request.js';
import { CommandBudgets } from './rate-bound.js';
import { namedTrustedKey } from './intake.js';
import { HeldStarts, type HeldStart } from './held-starts.js';
import { CommandsInFlight, KeyBudgets, RESERVED_SCOPES, VERIFY_RESERVE } from './key-budgets.js';
import { serveLocalCommand, type LocalCommandContext, type Served } from './local-commands.js';
import { admitNonce, decideCommand, refusalText, type GatePolicy } from './command-gate.js';
import type { MachineVoice } from './machine-voice.js';
import type { UpdateAgent } from '../../updates/agent.js';

const PAYMENT_COMMAND_TIMEOUT_MS = 15_000;
const REFUSAL_LOG_INTERVAL_MS = 60_000;

type PaymentReply = Extract<PaymentToFleet, { type: 'fleet.reply' }>;
type Outcome = Served['outcome'];

/** What the command server counts, reported in the fleet's health. */
export interface CommandCounters {
  commands: number;
  commandsRefused: number;
  payloadsRejected: number;
  unauthorized: number;
  retainedIgnored: number;
}

/** The operator keys, and why signed commands are all refused when there are none (said once at start). */
export interface FleetTrust {
  keyring: Keyring | null;
  problem: string | null;
}

export interface CommandServerOptions {
  config: QrvendConfig;
  machineId: string;
  topics: MachineTopics;
  log: Logger;
  trust: FleetTrust;
  voice: MachineVoice | null;
  local: LocalCommandContext;
  /** The update agent (update.offer); null when it is off. */
  updates: () => UpdateAgent | null;
  /** The connected client, or null. */
  client: () => MqttClient | null;
  /** The alarms of the last facts (a CLOCK_UNSYNCED machine refuses signed commands with a time). */
  alarms: () => readonly string[];
  toPayment(message: FleetToPayment): void;
  monotonicNow(): number;
  wallNow(): number;
}

/** Reads fleet.trustFile: the keys signed commands are checked against. */
export function loadTrust(fleet: QrvendConfig['fleet']): FleetTrust {
  if (fleet.trustFile === null) return { keyring: null, problem: 'fleet.trustFile is null' };
  if (!existsSync(fleet.trustFile)) return { keyring: null, problem: `there is no trust file at ${fleet.trustFile}` };
  try {
    const keyring = loadKeyring(fleet.trustFile);
    return { keyring, problem: keyring.byId.size === 0 ? `the trust file ${fleet.trustFile} holds no key` : null };
  } catch (err) {
    const problem = err instanceof TrustFileError ? err.message : `the trust file ${fleet.trustFile} cannot be read`;
    return { keyring: null, problem };
  }
}

export class CommandServer {
  readonly counters: CommandCounters = {
    commands: 0,
    commandsRefused: 0,
    payloadsRejected: 0,
    unauthorized: 0,
    retainedIgnored: 0,
  };
  readonly budgets: CommandBudgets;
  readonly keyBudgets = new KeyBudgets();
  private readonly gate: GatePolicy;
  private readonly commandsInFlight = new CommandsInFlight();
  /** Relayed Starts answered Approved, held by the payment side until their confirmation. */
  private readonly heldStarts = new HeldStarts();
  private readonly waiting = new Map<number, { resolve: (m: PaymentReply) => void; timer: NodeJS.Timeout }>();
  private nextCommandId = 1;
  /** Beside the overlay, in the state directory: written before a signed command acts (src/trust/nonce-book.ts). */
  private readonly nonceFile: string;
  private nonces: NonceBook | null = null;
  private readonly refusalLog: RepeatedLog;
  private retainedLogged = false;

  constructor(private readonly o: CommandServerOptions) {
    const { fleet } = o.config;
    this.budgets = new CommandBudgets(o.monotonicNow());
    this.gate = { keyring: o.trust.keyring, allowUnsignedReads: fleet.allowUnsignedReads };
    this.nonceFile = join(dirname(fleet.configOverlay), 'fleet-nonces.json');
    this.refusalLog = new RepeatedLog({
      intervalMs: REFUSAL_LOG_INTERVAL_MS,
      write: (fields, repeated) =>
        o.log.warn({ event: 'fleet.command.refused', ...fields, repeated }, `fleet command refused: ${fields.why}`),
    });
  }

  /** A command's message as it came from the broker. */
  async onCommand(topic: string, payload: Buffer, packet: IPublishPacket): Promise<void> {
    if (packet.retain) return this.ignoreRetained(topic);
    const { o, budgets, counters } = this;
    const now = o.monotonicNow();
    // The relay's confirmation of a Start held here waits for no share: its signature is checked at once.
    const held = topic === o.topics.command('start.confirm') ? this.heldStarts.candidate(payload, now) : null;
    const intake = held === null ? this.admitIntake(topic, payload, now) : 'held';
    if (intake === null) return; // counted (health) and dropped
    const { fleet } = o.config;
    const properties = packet.properties ?? {};
    const parsed = parseCommand(fleet.topicPrefix, o.machineId, o.topics.replies, topic, payload, properties);
    if (parsed.kind === 'ignore') return;
    counters.commands += 1;
    // What names no trusted key is answered from its own refusals budget, so a flood of it cannot mute the others'.
    const refuse = (code: CommandErrorCode, message: string) =>
      this.refuse(parsed.reply, parsed.name, code, message, intake === 'untrusted' ? 'refusals' : 'trustedRefusals');
    if (parsed.kind === 'error') {
      counters.payloadsRejected += 1;
      return refuse(parsed.code, parsed.message);
    }
    if (held !== null) return this.confirmHeld(parsed, held);
    // No trusted key vouched for it: the payment side would refuse it, so it is not asked (its time is the sales').
    if (intake === 'untrusted' && (parsed.name === 'start' || parsed.name === 'start.confirm')) {
      counters.unauthorized += 1;
      const why = 'not vouched for by a relay key this machine trusts (fleet.trustFile, scope start): it names none';
      this.refusalLog.add({ command: parsed.name, reason: 'unsigned', why });
      return refuse('BAD_ARGS', why);
    }
    const facts = {
      machineId: o.machineId,
      name: parsed.name,
      args: parsed.args,
      signature: parsed.signature,
      nowMs: o.wallNow(),
      clockUnsynced: o.alarms().includes('CLOCK_UNSYNCED'),
    };
    const decision = decideCommand(this.gate, facts, (scope) =>
      budgets.take('verify', o.monotonicNow(), RESERVED_SCOPES.has(scope) ? 0 : VERIFY_RESERVE),
    );
    if (decision.kind === 'drop') return;
    if (decision.kind === 'refuse') {
      counters.unauthorized += 1;
      if (decision.keyId !== undefined) this.keyBudgets.refused(decision.keyId);
      this.refusalLog.add({ command: parsed.name, reason: decision.reason, why: decision.message });
      return refuse('UNAUTHORIZED', refusalText(decision.reason, decision.message));
    }
    // A relayed Start spent its budget on arrival; the relayed-Start code checks the relay's voucher.
    const run = decision.kind === 'run' ? decision : null;
    if (run?.budget === 'unsigned' && !budgets.take('unsigned', o.monotonicNow())) return;
    if (run?.budget === 'key' && !this.keyBudgets.take(run.signer, o.monotonicNow())) return;
    const spender = run?.budget === 'key' ? run.signer : null;
    if (!this.commandsInFlight.enter(spender)) {
      return refuse('BUSY', 'too many commands in progress; try again');
    }
    if (run?.budget === 'key') {
      const admitted = admitNonce(this.nonceBook(), run.signature, o.wallNow(), run.signer);
      if (!admitted.ok) {
        this.commandsInFlight.leave(spender);
        counters.unauthorized += 1;
        this.keyBudgets.refused(run.signer.id);
        this.refusalLog.add({ command: parsed.name, reason: admitted.reason, why: admitted.message });
        return refuse('UNAUTHORIZED', refusalText(admitted.reason, admitted.message));
      }
    }
    await this.runAdmitted(parsed.reply, parsed.name, parsed.args, run?.signature?.keyId ?? null, spender);
  }

  /**
   * The share a message spends before it is parsed (intake.ts, rate-bound.ts): `untrusted` when it
   * names no key of the trust file, else the relay's `start` on the relayed topics and `trusted` on
   * the others. Returns the share spent; null: dropped (counted).
   */
  private admitIntake(topic: string, payload: Buffer, nowMs: number): 'untrusted' | 'trusted' | 'start' | null {
    const { topics } = this.o;
    const relayed = topic === topics.command('start') || topic === topics.command('start.confirm');
    const share = namedTrustedKey(payload, this.gate.keyring) === null ? 'untrusted' : relayed ? 'start' : 'trusted';
    return this.budgets.take(share, nowMs) ? share : null;
  }

  /**
   * A message on `start.confirm` carrying a held Start's voucher nonce: passed on to the payment
   * side (which authorizes) only when the relay's key signed it for that Start; else refused, and
   * the Start stays held until its own deadline (held-starts.ts).
   */
  private async confirmHeld(parsed: Extract<ParsedCommand, { kind: 'request' }>, held: HeldStart): Promise<void> {
    const { o } = this;
    const checked = this.heldStarts.check(held, parsed.args, o.machineId, this.gate.keyring, o.wallNow());
    if (!checked.ok) {
      this.counters.unauthorized += 1;
      this.refusalLog.add({ command: parsed.name, reason: 'unconfirmed', why: checked.message });
      return this.refuse(parsed.reply, parsed.name, 'BAD_ARGS', checked.message, 'trustedRefusals');
    }
    this.heldStarts.remove(held);
    // Outside the bound of commands in progress: at most one per held Start gets here.
    await this.runAdmitted(parsed.reply, parsed.name, parsed.args, null, null, false);
  }

  /** The payment worker's answer to a command it was asked (askPayment). */
  paymentReplied(message: PaymentReply): void {
    const waiting = this.waiting.get(message.id);
    if (!waiting) return;
    this.waiting.delete(message.id);
    clearTimeout(waiting.timer);
    waiting.resolve(message);
  }

  /** Dropped commands, for the fleet's health. */
  dropped(): { commandsDropped: number; droppedBy: unknown; byKey: unknown } {
    const { budgets, keyBudgets } = this;
    const commandsDropped = budgets.totalDropped + keyBudgets.totalDropped;
    return { commandsDropped, droppedBy: budgets.dropped(), byKey: keyBudgets.byKey() };
  }

  /**
   * A retained command was published for whoever subscribes next, not for now: it would run at
   * every start. Never executed, never answered (the device cannot clear it: it may not publish on
   * cmd/); counted in health and logged once (docs/fleet.md).
   */
  private ignoreRetained(topic: string): void {
    this.counters.retainedIgnored += 1;
    if (this.retainedLogged) return;
    this.retainedLogged = true;
    const why =
      "a retained command is on this machine's command topic: ignored (commands are never retained; " +
      'clear it on the broker)';
    this.o.log.warn({ event: 'fleet.command.retained', topic: topic.slice(0, 200) }, why);
  }

  private async runAdmitted(
    route: ReplyRoute,
    name: CommandName,
    args: unknown,
    keyId: string | null,
    spender: Parameters<CommandsInFlight['enter']>[0],
    inFlight = true,
  ): Promise<void> {
    try {
      this.o.log.info({ event: 'fleet.command', command: name, keyId }, `fleet command ${name}`);
      const served = await this.serve(name, args);
      if (name === 'start' && served.outcome.ok) {
        const clocks = { wallNowMs: this.o.wallNow(), nowMs: this.o.monotonicNow() };
        this.heldStarts.add(args, served.outcome.result, clocks);
      }
      await this.reply(route, name, served.outcome);
      served.after?.(); // a restart must not beat its own reply
    } catch (err) {
      this.o.log.error({ err: (err as Error).message, command: name }, 'fleet command failed');
      const message = 'the command failed inside the agent; see its log';
      await this.reply(route, name, { ok: false, code: 'INTERNAL', message });
    } finally {
      if (inFlight) this.commandsInFlight.leave(spender);
    }
  }

  /** Runs an admitted command: the fleet worker's own, or the payment side's. */
  private async serve(name: CommandName, args: unknown): Promise<Served> {
    if (name === 'update.offer') {
      const updates = this.o.updates();
      if (updates === null) {
        const message = 'the update agent is off on this machine (see its log)';
        return { outcome: { ok: false, code: 'UNAVAILABLE', message } };
      }
      return { outcome: updates.offer(args) };
    }
    const served = await serveLocalCommand(this.o.local, name, args);
    if (served !== null) return served;
    if (name === 'start' && !this.o.config.fleet.acceptRelayedStart) {
      const message = 'this machine does not take relayed Starts (fleet.acceptRelayedStart is false)';
      return { outcome: { ok: false, code: 'UNAVAILABLE', message } };
    }
    const answer = await this.askPayment(name, args);
    if (answer.ok) return { outcome: { ok: true, result: answer.result } };
    return { outcome: { ok: false, code: asErrorCode(answer.error.code), message: answer.error.message } };
  }

  private askPayment(name: string, args: unknown): Promise<PaymentReply> {
    const id = this.nextCommandId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        const message = `the payment side did not answer within ${PAYMENT_COMMAND_TIMEOUT_MS / 1000} s`;
        resolve({ type: 'fleet.reply', id, ok: false, error: { code: 'UNAVAILABLE', message } });
      }, PAYMENT_COMMAND_TIMEOUT_MS);
      this.waiting.set(id, { resolve, timer });
      this.o.toPayment({ type: 'fleet.command', id, name, args });
    });
  }

  /**
   * An error reply, within the refusals budget; beyond it the refusal is dropped unanswered (a flood
   * must not make the device flood back).
   */
  private async refuse(
    route: ReplyRoute,
    command: string,
    code: CommandErrorCode,
    message: string,
    budget: 'refusals' | 'trustedRefusals',
  ): Promise<void> {
    this.counters.commandsRefused += 1;
    if (!this.budgets.take(budget, this.o.monotonicNow())) return;
    await this.reply(route, command, { ok: false, code, message });
  }

  private reply(route: ReplyRoute, command: string, outcome: Outcome): Promise<void> {
    const head = { machineId: this.o.machineId, command: command.slice(0, 64), correlationId: route.correlationId };
    let body: CommandReply = outcome.ok
      ? { ok: true, ...head, result: outcome.result }
      : { ok: false, ...head, error: { code: outcome.code, message: outcome.message.slice(0, 1024) } };
    let text = JSON.stringify(body);
    if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) {
      body = { ok: false, ...head, error: { code: 'INTERNAL', message: 'the reply is too large to send' } };
      text = JSON.stringify(body);
    }
    if (this.o.voice !== null) text = this.o.voice.reply(body);
    const options: IClientPublishOptions = { qos: 1 };
    if (this.o.config.fleet.protocolVersion === 5 && route.correlationData !== null) {
      options.properties = { correlationData: route.correlationData };
    }
    const client = this.o.client();
    if (client === null) return Promise.resolve();
    return new Promise((resolve) => client.publish(route.topic, text, options, () => resolve()));
  }

  private nonceBook(): NonceBook {
    if (this.nonces === null) {
      this.nonces = new NonceBook(this.nonceFile, this.o.wallNow());
      const { lostBecause } = this.nonces;
      if (lostBecause !== null) this.o.log.warn({ event: 'fleet.nonces.lost', file: this.nonceFile }, lostBecause);
    }
    return this.nonces;
  }
}

function asErrorCode(code: string): CommandErrorCode {
  return (COMMAND_ERROR_CODES as readonly string[]).includes(code) ? (code as CommandErrorCode) : 'INTERNAL';
}
