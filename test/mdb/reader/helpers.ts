/**
 * Drives the pure reader with readable inputs (`line('c,STATUS,ENABLED')`) and reads its effects
 * back as wire text and posted messages.
 */
import assert from 'node:assert/strict';
import { encodeCommand, parseBoardLine } from '../../../src/mdb/codec/index.js';
import {
  initialModel,
  setconfAliases,
  setconfCommands,
  transition,
  type ReaderConfig,
  type ReaderEffect,
  type ReaderInput,
  type ReaderModel,
  type TimerName,
} from '../../../src/mdb/reader/index.js';
import type { MainToPayment, PaymentToMain } from '../../../src/ipc/messages.js';

export const mdbDefaults = {
  port: 'sim',
  baudRate: 115200 as const,
  device: 'cashless1' as const,
  profile: 'level3-always-idle' as const,
  alwaysIdle: true,
  virtualCredit: null,
  sessionRefreshMs: null,
  multiVend: true,
  cashSale: false,
  boardTimeouts: { idleS: null, messageS: null },
  boardKeys: {},
  resetLoop: { count: 3, windowS: 600 },
  maxResponseTimeS: 60,
  sessionIdleTimeoutMs: 60_000,
  vendResultTimeoutMs: 60_000,
  linkWatchdogMs: 5000,
  reopenMinMs: 250,
  reopenMaxMs: 10_000,
  maxLineLength: 256,
};

export function readerConfig(over: Partial<ReaderConfig> = {}): ReaderConfig {
  return {
    decimalPlaces: 2,
    alwaysIdle: true,
    virtualCreditMinor: null,
    sessionIdleTimeoutMs: 60_000,
    vendResultTimeoutMs: 60_000,
    sessionRefreshMs: null,
    multiVend: true,
    paymentWaitMs: 59_000,
    boardAnswerMs: 5000,
    setconf: setconfCommands({ mdb: mdbDefaults, decimalPlaces: 2, currencyNumeric: '978' }),
    setconfAliases: setconfAliases({}),
    requestIdPrefix: 'rq',
    ageDeniedItems: {},
    ...over,
  };
}

export function line(text: string): ReaderInput {
  const parsed = parseBoardLine(text);
  assert.ok(parsed.ok, `test fixture line "${text}" does not parse`);
  return { kind: 'line', line: parsed.value };
}

export function pay(message: PaymentToMain): ReaderInput {
  return { kind: 'payment', message };
}

export function timeout(timer: TimerName): ReaderInput {
  return { kind: 'timeout', timer };
}

export const linkUp: ReaderInput = { kind: 'link.up' };

/** A reader and everything it did, fed one input at a time. */
export class Harness {
  model: ReaderModel;
  effects: ReaderEffect[] = [];

  constructor(
    readonly cfg: ReaderConfig = readerConfig(),
    model: ReaderModel = initialModel(),
  ) {
    this.model = model;
  }

  /** Feeds inputs; returns only the effects of these inputs. */
  feed(...inputs: ReaderInput[]): ReaderEffect[] {
    const out: ReaderEffect[] = [];
    for (const input of inputs) {
      const t = transition(this.model, input, this.cfg);
      this.model = t.model;
      out.push(...t.effects);
    }
    this.effects.push(...out);
    return out;
  }

  get state(): string {
    return this.model.state.kind;
  }

  clone(): Harness {
    return new Harness(this.cfg, structuredClone(this.model));
  }
}

export function sent(effects: ReaderEffect[]): string[] {
  return effects.flatMap((e) => (e.kind === 'send' ? [encodeCommand(e.command, 2)] : []));
}

export function posted(effects: ReaderEffect[]): MainToPayment[] {
  return effects.flatMap((e) => (e.kind === 'post' ? [e.message] : []));
}

export function postedTypes(effects: ReaderEffect[]): string[] {
  return posted(effects).map((m) => m.type);
}

export function refusals(effects: ReaderEffect[]): string[] {
  return effects.flatMap((e) => (e.kind === 'refused' ? [`${e.what}: ${e.reason}`] : []));
}

export function armed(effects: ReaderEffect[]): TimerName[] {
  return effects.flatMap((e) => (e.kind === 'timer.arm' ? [e.timer] : []));
}

/** Named reader situations, each reached through real transitions from power-up. */
export const reach = {
  Offline: () => new Harness(),
  Inactive: (cfg?: ReaderConfig) => {
    const h = new Harness(cfg);
    // Every SETCONF line answered c,SET,OK, then C,1 and V: the version answer completes the sequence.
    return withFeed(h, linkUp, line('c,0'), ...h.cfg.setconf.map(() => line('c,SET,OK')), line('v,1.0,B1'));
  },
  Disabled: (cfg?: ReaderConfig) => withFeed(reach.Inactive(cfg), line('c,STATUS,DISABLED')),
  Enabled: (cfg?: ReaderConfig) => withFeed(reach.Disabled(cfg), line('c,STATUS,ENABLED')),
  Starting: (cfg?: ReaderConfig) => withFeed(reach.Enabled(cfg), pay({ type: 'session.begin', txId: 'T1', funds: 5 })),
  SessionIdle: (cfg?: ReaderConfig) => withFeed(reach.Starting(cfg), line('c,STATUS,IDLE,5.00')),
  VendStatic: () => withFeed(reach.SessionIdle(), line('c,STATUS,VEND,1.50,12')),
  Stopping: () => withFeed(reach.SessionIdle(), pay({ type: 'session.cancel', txId: 'T1', reason: 'test' })),
  DynamicAwaitingPayment: () => withFeed(reach.Enabled(), line('c,STATUS,VEND,2.00,7')),
  DynamicAwaitingResult: () =>
    withFeed(reach.DynamicAwaitingPayment(), pay({ type: 'vend.approve', requestId: 'rq-1', txId: 'D1', amount: 2 })),
};

function withFeed(h: Harness, ...inputs: ReaderInput[]): Harness {
  h.feed(...inputs);
  return h;
}
