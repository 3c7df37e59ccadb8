/**
 * The fleet worker thread (design section 10): it alone owns the MQTT client, so a broker that
 * hangs, resets or floods commands costs this thread's time, never the machine loop's or the
 * payment worker's. It publishes the retained `status` (last will `{"online":false}`), the queued
 * events the payment worker hands it (deleted there on PUBACK), `health` at QoS 0, and serves the
 * commands on its own `cmd/+`, asking the payment worker for those that need the ledger or the
 * reader.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { connect, type IClientOptions, type IClientPublishOptions, type IPublishPacket, type MqttClient } from 'mqtt';
import type { QrvendConfig } from '../../config/schema.js';
import { createLogger } from '../../core/log.js';
import { monotonicNow, wallNow } from '../../core/clock.js';
import { RepeatedLog } from '../../core/log-limiter.js';
import { threadMemory } from '../../core/thread-memory.js';
import { loadKeyring, TrustFileError, type Keyring } from '../../trust/keys.js';
import { NonceBook } from '../../trust/nonce-book.js';
import { STATUS_REFRESH_MS } from '../../trust/machine-sig.js';
import { machineVoice } from './machine-voice.js';
import type { FleetFacts, FleetQueuedEvent, FleetToMain, FleetToPayment, MainToFleet, PaymentToFleet } from '../../ipc/messages.js';
import { machineTopics, type CommandName } from '../contract/topics.js';
import type { AlarmCode } from '../contract/alarms.js';
import { COMMAND_ERROR_CODES, MAX_PAYLOAD_BYTES, type CommandReply, type StatusMessage } from '../contract/messages.js';
import { parseCommand, type CommandErrorCode, type ReplyRoute } from './command-request.js';
import { CommandBudgets } from './rate-bound.js';
import { CommandsInFlight, KeyBudgets, RESERVED_SCOPES, VERIFY_RESERVE } from './key-budgets.js';
import { serveLocalCommand, type LocalCommandContext, type Served } from './local-commands.js';
import { admitNonce, decideCommand, refusalText, type GatePolicy } from './command-gate.js';
import { keepNoDelay } from '../no-delay.js';
import { withoutCredentials } from '../../core/url-credentials.js';
import { boundInboundPackets } from '../packet-bound.js';
import { deviceClientOptions } from './client-options.js';
import { readFleetCredentials } from '../../config/fleet-credentials.js';
import { createProbe, probeTopic } from './probe.js';
import { UpdateAgent } from '../../updates/agent.js';
import { updatesDir } from '../../updates/files.js';
import { machineArch } from '../../updates/manifest.js';

export interface FleetWorkerData {
  config: QrvendConfig;
  machineId: string;
  terminalId: string;
  /** The site config file (null: the daemon runs on defaults only, no fleet overlay, no config.set). */
  configFile: string | null;
  version: string;
  startedAt: string;
  paymentPort: MessagePort;
  /** A configuration trial is on: prove the round trip on the machine's own command topic (probe.ts). */
  probe: boolean;
}

/** Events published and not yet acknowledged at once: bounds memory and the burst after an outage. */
const EVENT_WINDOW = 32;
const PAYMENT_COMMAND_TIMEOUT_MS = 15_000;

const data = workerData as FleetWorkerData;
const { config } = data;
const fleet = config.fleet;
const log = createLogger({ level: config.log.level, name: 'fleet' });
const toMain = (message: FleetToMain) => parentPort!.postMessage(message);
const payment = data.paymentPort;
const toPayment = (message: FleetToPayment) => payment.postMessage(message);
const topics = machineTopics(fleet.topicPrefix, data.machineId);
const v5 = fleet.protocolVersion === 5;

/** Signs what the relay believes (status, last will, replies); null: no machine key (machine-voice.ts). */
const voice = machineVoice(fleet, data.machineId, wallNow, log);

/** The URL without credentials, for the log. */
const safeUrl = (url: string): string => withoutCredentials(url) ?? '(unparsable url)';

function clientOptions(): IClientOptions {
  const options = deviceClientOptions(fleet, data.machineId, topics.status);
  const credentials = readFleetCredentials(fleet);
  if (fleet.username !== null) options.username = fleet.username;
  return { ...options, ...credentials };
}

let client: MqttClient | null = null;
let connected = false;
let facts: FleetFacts | null = null;
let lastStatusKey = '';
let lastStats: Record<string, unknown> = {};
let stopping = false;
const counters = { connects: 0, eventsPublished: 0, commands: 0, commandsRefused: 0, payloadsRejected: 0, unauthorized: 0, retainedIgnored: 0, packetsTooLarge: 0 };
const budgets = new CommandBudgets(monotonicNow());
const keyBudgets = new KeyBudgets();
const ownProbeTopic = probeTopic(fleet.topicPrefix, data.machineId);
const probe = data.probe
  ? createProbe({
      publish: (body) => (connected ? client?.publish(ownProbeTopic, body, { qos: 1 }) : undefined),
      onReturned: () => {
        log.info({ event: 'fleet.probe.returned' }, 'own command topic round trip: a message published to it came back through the broker');
        toMain({ type: 'fleet.probe.returned' });
      },
    })
  : null;

// --- events -----------------------------------------------------------------------------------
let cursor = 0;
let wanting = false;
const inflight = new Set<number>();

function pull(): void {
  if (!connected || wanting || stopping || inflight.size >= EVENT_WINDOW) return;
  wanting = true;
  toPayment({ type: 'fleet.events.want', afterSeq: cursor, max: EVENT_WINDOW - inflight.size });
}

function publishEvents(events: FleetQueuedEvent[]): void {
  wanting = false;
  for (const event of events) {
    cursor = Math.max(cursor, event.seq);
    if (inflight.has(event.seq)) continue;
    inflight.add(event.seq);
    client!.publish(topics.events, event.body, { qos: 1 }, (err) => {
      inflight.delete(event.seq);
      if (err) {
        // Not acknowledged and given up by the client: pull it again (same eventId).
        cursor = Math.min(cursor, event.seq - 1);
      } else {
        counters.eventsPublished += 1;
        toPayment({ type: 'fleet.events.acked', seqs: [event.seq] });
      }
      pull();
    });
  }
  if (events.length > 0) pull();
}

// --- status and health ------------------------------------------------------------------------
const ARCH = machineArch();

function statusMessage(): Extract<StatusMessage, { online: true }> | null {
  if (facts === null) return null;
  return {
    online: true,
    machineId: data.machineId,
    terminalId: data.terminalId,
    uniQr: config.machine.uniQr,
    version: data.version,
    ...(ARCH !== null ? { arch: ARCH } : {}),
    startedAt: data.startedAt,
    reader: facts.reader,
    readerDisabledRemotely: facts.readerDisabledRemotely,
    gateway: facts.gateway,
    outbox: facts.outbox,
    alarms: facts.alarms as AlarmCode[],
    acceptsRelayedStart: fleet.acceptRelayedStart,
    ...(updates?.status() ? { update: updates.status()! } : {}),
    at: new Date().toISOString(),
  };
}

/**
 * The reader goes session -> vend -> session at every vend: publishing each change would be a
 * retained QoS 1 message per vend per machine, for a state nobody watches at that pace. Changes
 * are coalesced to one publish per STATUS_MIN_GAP_MS, always ending on the latest facts.
 */
const STATUS_MIN_GAP_MS = 1_000;
let lastStatusAt = -Infinity;
let statusTimer: NodeJS.Timeout | null = null;

function publishStatus(force: boolean): void {
  if (!force) {
    const wait = lastStatusAt + STATUS_MIN_GAP_MS - monotonicNow();
    if (wait > 0) {
      statusTimer ??= setTimeout(() => {
        statusTimer = null;
        publishStatus(false);
      }, wait);
      return;
    }
  }
  const status = statusMessage();
  if (status === null || !connected) return;
  const key = JSON.stringify({ ...status, at: null });
  if (!force && key === lastStatusKey) return;
  lastStatusKey = key;
  lastStatusAt = monotonicNow();
  client!.publish(topics.status, JSON.stringify(voice === null ? status : voice.status(status)), { qos: 1, retain: true });
}

/** A signed status is believed for its window only: signed and published again, changed or not. */
const statusRefresh = setInterval(() => publishStatus(true), STATUS_REFRESH_MS);
statusRefresh.unref();

function publishHealth(): void {
  updates?.refresh();
  if (!connected) return;
  const health = {
    machineId: data.machineId,
    at: new Date().toISOString(),
    stats: { ...lastStats, fleet: { ...counters, commandsDropped: budgets.totalDropped + keyBudgets.totalDropped, droppedBy: budgets.dropped(), byKey: keyBudgets.byKey(), eventsInFlight: inflight.size, queued: facts?.queued ?? null } },
  };
  const text = JSON.stringify(health);
  if (Buffer.byteLength(text) <= MAX_PAYLOAD_BYTES) client!.publish(topics.health, text, { qos: 0 });
}

// --- commands ---------------------------------------------------------------------------------
let nextCommandId = 1;
const commandsInFlight = new CommandsInFlight();
const waiting = new Map<number, { resolve: (m: Extract<PaymentToFleet, { type: 'fleet.reply' }>) => void; timer: NodeJS.Timeout }>();

function askPayment(name: string, args: unknown): Promise<Extract<PaymentToFleet, { type: 'fleet.reply' }>> {
  const id = nextCommandId++;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      resolve({ type: 'fleet.reply', id, ok: false, error: { code: 'UNAVAILABLE', message: `the payment side did not answer within ${PAYMENT_COMMAND_TIMEOUT_MS / 1000} s` } });
    }, PAYMENT_COMMAND_TIMEOUT_MS);
    waiting.set(id, { resolve, timer });
    toPayment({ type: 'fleet.command', id, name, args });
  });
}

function reply(route: ReplyRoute, command: string, outcome: { ok: true; result: unknown } | { ok: false; code: CommandErrorCode; message: string }): Promise<void> {
  let body: CommandReply = outcome.ok
    ? { ok: true, machineId: data.machineId, command: command.slice(0, 64), correlationId: route.correlationId, result: outcome.result }
    : { ok: false, machineId: data.machineId, command: command.slice(0, 64), correlationId: route.correlationId, error: { code: outcome.code, message: outcome.message.slice(0, 1024) } };
  let text = JSON.stringify(body);
  if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) {
    body = { ok: false, machineId: data.machineId, command: command.slice(0, 64), correlationId: route.correlationId, error: { code: 'INTERNAL', message: 'the reply is too large to send' } };
    text = JSON.stringify(body);
  }
  if (voice !== null) text = voice.reply(body);
  const options: IClientPublishOptions = { qos: 1 };
  if (v5 && route.correlationData !== null) options.properties = { correlationData: route.correlationData };
  return new Promise((resolve) => (client === null ? resolve() : client.publish(route.topic, text, options, () => resolve())));
}

const local: LocalCommandContext = {
  config,
  configFile: data.configFile,
  version: data.version,
  startedAt: data.startedAt,
  log,
  restart: (reason) => toMain({ type: 'fleet.restart', reason }),
};

/** Why signed commands are refused on this machine, when they all are (no usable trust file); said once at start. */
function loadTrust(): { keyring: Keyring | null; problem: string | null } {
  if (fleet.trustFile === null) return { keyring: null, problem: 'fleet.trustFile is null' };
  if (!existsSync(fleet.trustFile)) return { keyring: null, problem: `there is no trust file at ${fleet.trustFile}` };
  try {
    const keyring = loadKeyring(fleet.trustFile);
    return { keyring, problem: keyring.byId.size === 0 ? `the trust file ${fleet.trustFile} holds no key` : null };
  } catch (err) {
    return { keyring: null, problem: err instanceof TrustFileError ? err.message : `the trust file ${fleet.trustFile} cannot be read` };
  }
}

const trust = loadTrust();
const gate: GatePolicy = { keyring: trust.keyring, allowUnsignedReads: fleet.allowUnsignedReads };
/** Beside the overlay, in the state directory: written before a signed command acts (src/trust/nonce-book.ts). */
const nonceFile = join(dirname(fleet.configOverlay), 'fleet-nonces.json');
let nonces: NonceBook | null = null;
function nonceBook(): NonceBook {
  if (nonces === null) {
    nonces = new NonceBook(nonceFile, wallNow());
    if (nonces.lostBecause !== null) log.warn({ event: 'fleet.nonces.lost', file: nonceFile }, nonces.lostBecause);
  }
  return nonces;
}
/** update.offer (design section 12): checks, downloads, verifies, and hands the version to the main thread. */
const updates: UpdateAgent | null = (() => {
  try {
    return new UpdateAgent({
      dir: updatesDir(config),
      keyring: trust.keyring,
      running: data.version,
      caFile: config.updates.caFile,
      maxDownloadBytes: config.updates.maxDownloadBytes,
      emit: (event) => toPayment({ type: 'fleet.update.event', event }),
      ready: (version, rolloutId) => toMain({ type: 'update.ready', version, rolloutId }),
      statusChanged: () => publishStatus(false),
      log,
      wallNow,
      monotonicNow,
    });
  } catch (err) {
    log.error({ err: (err as Error).message }, 'update agent off: its state cannot be read; update.offer is refused');
    return null;
  }
})();

const refusalLog = new RepeatedLog({
  intervalMs: 60_000,
  write: (fields, repeated) => log.warn({ event: 'fleet.command.refused', ...fields, repeated }, `fleet command refused: ${String(fields.why)}`),
});
let retainedLogged = false;

/** An error reply, within the refusals budget; beyond it the refusal is dropped unanswered (a flood must not make the device flood back). */
async function refuse(route: ReplyRoute, command: string, code: CommandErrorCode, message: string): Promise<void> {
  counters.commandsRefused += 1;
  if (!budgets.take('refusals', monotonicNow())) return;
  await reply(route, command, { ok: false, code, message });
}

async function onCommand(topic: string, payload: Buffer, packet: IPublishPacket): Promise<void> {
  // A retained command was published for whoever subscribes next, not for now: it would run at
  // every start (issue 31 item 2). Never executed, never answered (the device cannot clear it:
  // it may not publish on cmd/); counted in health and logged once.
  if (packet.retain) {
    counters.retainedIgnored += 1;
    if (!retainedLogged) {
      retainedLogged = true;
      log.warn({ event: 'fleet.command.retained', topic: topic.slice(0, 200) }, 'a retained command is on this machine\'s command topic: ignored (commands are never retained; clear it on the broker)');
    }
    return;
  }
  const now = monotonicNow();
  // Relayed Starts and their confirmations have a budget of their own, so a Start flood cannot starve the operator.
  const relayed = topic === topics.command('start') || topic === topics.command('start.confirm');
  if (!budgets.take(relayed ? 'start' : 'intake', now)) return; // counted (health) and dropped
  const parsed = parseCommand(fleet.topicPrefix, data.machineId, topics.replies, topic, payload, packet.properties ?? {});
  if (parsed.kind === 'ignore') return;
  counters.commands += 1;
  if (parsed.kind === 'error') {
    counters.payloadsRejected += 1;
    await refuse(parsed.reply, parsed.name, parsed.code, parsed.message);
    return;
  }
  const decision = decideCommand(
    gate,
    { machineId: data.machineId, name: parsed.name, args: parsed.args, signature: parsed.signature, nowMs: wallNow(), clockUnsynced: facts?.alarms.includes('CLOCK_UNSYNCED') === true },
    (scope) => budgets.take('verify', monotonicNow(), RESERVED_SCOPES.has(scope) ? 0 : VERIFY_RESERVE),
  );
  if (decision.kind === 'drop') return;
  if (decision.kind === 'refuse') {
    counters.unauthorized += 1;
    if (decision.keyId !== undefined) keyBudgets.refused(decision.keyId);
    refusalLog.add({ command: parsed.name, reason: decision.reason, why: decision.message });
    await refuse(parsed.reply, parsed.name, 'UNAUTHORIZED', refusalText(decision.reason, decision.message));
    return;
  }
  // A relayed Start spent its budget on arrival; the relayed-Start code checks the relay's voucher.
  if (decision.kind === 'run' && decision.budget === 'unsigned' && !budgets.take('unsigned', monotonicNow())) return;
  if (decision.kind === 'run' && decision.budget === 'key' && !keyBudgets.take(decision.signer, monotonicNow())) return;
  const spender = decision.kind === 'run' && decision.budget === 'key' ? decision.signer : null;
  if (!commandsInFlight.enter(spender)) {
    await refuse(parsed.reply, parsed.name, 'BUSY', 'too many commands in progress; try again');
    return;
  }
  if (decision.kind === 'run' && decision.budget === 'key') {
    const admitted = admitNonce(nonceBook(), decision.signature, wallNow(), decision.signer);
    if (!admitted.ok) {
      commandsInFlight.leave(spender);
      counters.unauthorized += 1;
      keyBudgets.refused(decision.signer.id);
      refusalLog.add({ command: parsed.name, reason: admitted.reason, why: admitted.message });
      await refuse(parsed.reply, parsed.name, 'UNAUTHORIZED', refusalText(admitted.reason, admitted.message));
      return;
    }
  }
  try {
    const keyId = decision.kind === 'run' ? (decision.signature?.keyId ?? null) : null;
    log.info({ event: 'fleet.command', command: parsed.name, keyId }, `fleet command ${parsed.name}`);
    const served = await serve(parsed.name, parsed.args);
    await reply(parsed.reply, parsed.name, served.outcome);
    served.after?.(); // a restart must not beat its own reply
  } catch (err) {
    log.error({ err: (err as Error).message, command: parsed.name }, 'fleet command failed');
    await reply(parsed.reply, parsed.name, { ok: false, code: 'INTERNAL', message: 'the command failed inside the agent; see its log' });
  } finally {
    commandsInFlight.leave(spender);
  }
}

/** Runs an admitted command: the fleet worker's own, or the payment side's. */
async function serve(name: CommandName, args: unknown): Promise<Served> {
  if (name === 'update.offer') {
    if (updates === null) return { outcome: { ok: false, code: 'UNAVAILABLE', message: 'the update agent is off on this machine (see its log)' } };
    return { outcome: updates.offer(args) };
  }
  const served = await serveLocalCommand(local, name, args);
  if (served !== null) return served;
  if (name === 'start' && !fleet.acceptRelayedStart) {
    return { outcome: { ok: false, code: 'UNAVAILABLE', message: 'this machine does not take relayed Starts (fleet.acceptRelayedStart is false)' } };
  }
  const answer = await askPayment(name, args);
  return { outcome: answer.ok ? { ok: true, result: answer.result } : { ok: false, code: asErrorCode(answer.error.code), message: answer.error.message } };
}

function asErrorCode(code: string): CommandErrorCode {
  return (COMMAND_ERROR_CODES as readonly string[]).includes(code) ? (code as CommandErrorCode) : 'INTERNAL';
}

// --- wiring -----------------------------------------------------------------------------------
payment.on('message', (message: PaymentToFleet) => {
  switch (message.type) {
    case 'fleet.events':
      publishEvents(message.events);
      return;
    case 'fleet.events.available':
      pull();
      return;
    case 'fleet.facts':
      facts = message.facts;
      publishStatus(false);
      return;
    case 'fleet.reply': {
      const w = waiting.get(message.id);
      if (!w) return;
      waiting.delete(message.id);
      clearTimeout(w.timer);
      w.resolve(message);
      return;
    }
  }
});

parentPort!.on('message', (message: MainToFleet) => {
  if (message.type === 'fleet.stats') {
    lastStats = message.stats;
    parentPort!.postMessage({ type: 'fleet.memory', memory: threadMemory() } satisfies FleetToMain);
    return;
  }
  if (message.type === 'shutdown') void shutdown();
});

async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  clearInterval(healthTimer);
  clearInterval(statusRefresh);
  probe?.stop();
  updates?.stop();
  if (statusTimer !== null) clearTimeout(statusTimer);
  const c = client;
  if (c !== null && connected) {
    // A graceful stop says so itself; the last will covers the other kind.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2_000);
      const goodbye: StatusMessage = voice === null ? { online: false } : voice.goodbye();
      c.publish(topics.status, JSON.stringify(goodbye), { qos: 1, retain: true }, () => (clearTimeout(timer), resolve()));
    });
  }
  if (c !== null) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2_000);
      c.end(true, {}, () => (clearTimeout(timer), resolve()));
    });
  }
  payment.close();
  toMain({ type: 'stopped' });
}

function start(): void {
  let options: IClientOptions;
  try {
    options = clientOptions();
  } catch (err) {
    // An unreadable CA, certificate or password file: said once, named by path only; payments go on.
    log.error({ code: 'FLEET_CREDENTIALS_UNREADABLE', err: (err as Error).message }, 'fleet link off: a TLS or password file named in fleet.* cannot be read');
    return;
  }
  log.info({ url: safeUrl(fleet.url!), machineId: data.machineId, protocolVersion: fleet.protocolVersion, operatorKeys: trust.keyring?.byId.size ?? 0 }, 'fleet link starting');
  if (trust.problem !== null) {
    log.warn({ event: 'fleet.trust.none' }, `no operator key (${trust.problem}): every command that needs a signature is refused; see docs/fleet.md "Signed commands"`);
  }
  // Connected by hand, so the inbound packet bound is on the first socket too: with MQTT 3.1.1 (no
  // Maximum Packet Size to announce) an oversized PUBLISH is cut as it streams in, never held whole.
  const c = connect(fleet.url!, { ...options, manualConnect: true });
  client = c;
  boundInboundPackets(c, fleet.protocolVersion, () => void (counters.packetsTooLarge += 1));
  keepNoDelay(c);
  // Each connection its own signed last will.
  voice?.armWill(c, topics.status);
  c.on('reconnect', () => voice?.armWill(c, topics.status));
  c.connect();
  c.on('connect', () => {
    connected = true;
    counters.connects += 1;
    log.info({ event: 'fleet.connected', connects: counters.connects }, 'fleet link connected');
    toMain({ type: 'fleet.link', connected: true });
    toPayment({ type: 'fleet.link', connected: true });
    c.subscribe(topics.commandFilter, { qos: 1 }, () => probe?.subscribed());
    publishStatus(true);
    pull();
  });
  c.on('close', () => {
    if (connected) {
      log.warn({ event: 'fleet.disconnected' }, 'fleet link lost; reconnecting');
      toMain({ type: 'fleet.link', connected: false });
    }
    connected = false;
    wanting = false;
  });
  c.on('error', (err) => log.warn({ err: err.message }, 'fleet link error'));
  c.on('message', (topic, payload, packet) => {
    // Not a command: the machine's own probe (probe.ts) runs nothing and gets no reply.
    if (topic === ownProbeTopic) return probe?.received(payload);
    void onCommand(topic, payload, packet);
  });
}

const healthTimer = setInterval(publishHealth, fleet.healthIntervalS * 1000);
healthTimer.unref();
start();
updates?.resume();
