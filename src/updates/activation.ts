/**
 * When an update (or a hand-installed package's restart request) may take the agent down
 * (docs/decisions/remote-updates.md, "never during a sale"): a pure state machine, timeouts fed in.
 *
 *   none --request--> waiting --idle seen--> holding --idle seen again, sessions held--> activate
 *                       ^                       |
 *                       +---busy, or the hold---+   (a session slipped in before the hold took)
 *                           took too long
 *
 * While waiting, nothing is held: sales go on. Once the machine is seen idle, new sessions are
 * held off (the Start endpoint answers busy, the reader begins none) and the machine is looked at
 * once more with the hold in place; only then is the activation written and the agent exits. A
 * wait longer than maxDeferralMs raises UPDATE_DEFERRED once and goes on waiting: never a forced
 * restart.
 */

export interface ActivationRequest {
  kind: 'update' | 'restart';
  /** The version to activate (update), or the package's version (restart; informative). */
  version: string;
  rolloutId: string | null;
}

export type ActivationState =
  | { phase: 'none' }
  | { phase: 'waiting'; request: ActivationRequest; sinceMs: number; deferred: boolean; waitingFor: string | null }
  | { phase: 'holding'; request: ActivationRequest; sinceMs: number; deferred: boolean; holdSinceMs: number }
  | { phase: 'activating'; request: ActivationRequest };

export type ActivationEvent =
  | { type: 'request'; request: ActivationRequest; nowMs: number }
  /**
   * What is in flight now (null = nothing: no session, payment, pending vend, delivery; reader idle); held = new
   * sessions are held off.
   */
  | { type: 'facts'; busy: string | null; held: boolean; nowMs: number }
  | { type: 'tick'; nowMs: number };

export type ActivationEffect =
  | { type: 'hold'; hold: boolean }
  | { type: 'deferred'; active: boolean; detail: string | null }
  | { type: 'activate'; request: ActivationRequest };

export interface ActivationLimits {
  /** updates.maxDeferralS in ms. */
  maxDeferralMs: number;
  /** How long the hold may wait for its confirmation before it is let go (and tried later). */
  holdTimeoutMs: number;
}

export interface Step {
  state: ActivationState;
  effects: ActivationEffect[];
}

export const initialActivation: ActivationState = { phase: 'none' };

/**
 * Which of two requests stands: an update's restart covers a restart request; a newer request replaces an older one.
 */
function merge(current: ActivationRequest, next: ActivationRequest): ActivationRequest {
  if (current.kind === 'update' && next.kind === 'restart') return current;
  return next;
}

export function stepActivation(state: ActivationState, event: ActivationEvent, limits: ActivationLimits): Step {
  switch (state.phase) {
    case 'activating':
      return { state, effects: [] };
    case 'none':
      if (event.type !== 'request') return { state, effects: [] };
      return {
        state: { phase: 'waiting', request: event.request, sinceMs: event.nowMs, deferred: false, waitingFor: null },
        effects: [],
      };
    case 'waiting': {
      if (event.type === 'request')
        return { state: { ...state, request: merge(state.request, event.request) }, effects: [] };
      const effects: ActivationEffect[] = [];
      let next: ActivationState = state;
      if (event.type === 'facts') {
        if (event.busy === null)
          return {
            state: {
              phase: 'holding',
              request: state.request,
              sinceMs: state.sinceMs,
              deferred: state.deferred,
              holdSinceMs: event.nowMs,
            },
            effects: [{ type: 'hold', hold: true }],
          };
        next = { ...state, waitingFor: event.busy };
      }
      if (!next.deferred && event.nowMs - next.sinceMs >= limits.maxDeferralMs) {
        next = { ...next, deferred: true };
        effects.push({
          type: 'deferred',
          active: true,
          detail:
            `the ${next.request.kind === 'update' ? `update to ${next.request.version}` : 'restart'}` +
            ` has waited ${Math.round((event.nowMs - next.sinceMs) / 1000)} s for an idle machine` +
            `${next.waitingFor === null ? '' : ` (${next.waitingFor})`}; it keeps waiting`,
        });
      }
      return { state: next, effects };
    }
    case 'holding': {
      if (event.type === 'request')
        return { state: { ...state, request: merge(state.request, event.request) }, effects: [] };
      const release = (busy: string | null): Step => ({
        state: {
          phase: 'waiting',
          request: state.request,
          sinceMs: state.sinceMs,
          deferred: state.deferred,
          waitingFor: busy,
        },
        effects: [{ type: 'hold', hold: false }],
      });
      if (event.type === 'facts') {
        if (event.busy !== null) return release(event.busy);
        if (event.held) {
          const effects: ActivationEffect[] = [{ type: 'activate', request: state.request }];
          if (state.deferred) effects.unshift({ type: 'deferred', active: false, detail: null });
          return { state: { phase: 'activating', request: state.request }, effects };
        }
      }
      if (event.nowMs - state.holdSinceMs >= limits.holdTimeoutMs)
        return release('sessions could not be held off in time');
      return { state, effects: [] };
    }
  }
}
