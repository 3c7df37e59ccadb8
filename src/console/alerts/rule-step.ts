/**
 * What one alert rule does about one machine, as a pure transition (docs/console.md "Alert
 * rules"): the condition must hold for the rule's hold time, counted from when the rule first saw
 * it, before the owner is told, so a flapping machine pages nobody; the owner is told only inside
 * the rule's hours (a condition still holding when they open is told then), again every repeat
 * interval if set, and, if asked, when it cleared (inside the hours too: a clear outside them is
 * said when they open, unless the condition came back meanwhile). Times are inputs.
 */

export type AlertState =
  | { tag: 'quiet' }
  | { tag: 'holding'; since: number; detail: string; firstSeen: number }
  | { tag: 'told'; since: number; detail: string; firstSeen: number; told: number; lastSent: number; sent: number }
  | { tag: 'clearing'; since: number; detail: string; firstSeen: number; told: number; lastSent: number; sent: number };

export interface AlertInput {
  /** The condition now: null when it does not hold. */
  holds: { since: number; detail: string } | null;
  now: number;
  /** Whether now is inside the rule's hours. */
  inHours: boolean;
}

export interface RuleTiming {
  holdMs: number;
  /** 0: told once. */
  repeatMs: number;
  sayCleared: boolean;
}

export type Say = 'raised' | 'repeated' | 'cleared' | null;

export function alertStep(state: AlertState, input: AlertInput, rule: RuleTiming): { next: AlertState; say: Say } {
  const { holds, now, inHours } = input;
  switch (state.tag) {
    case 'quiet':
      if (holds === null) return { next: state, say: null };
      return alertStep({ tag: 'holding', since: holds.since, detail: holds.detail, firstSeen: now }, input, rule);
    case 'holding':
      if (holds === null) return { next: { tag: 'quiet' }, say: null };
      if (now - state.firstSeen >= rule.holdMs && inHours) {
        const told = { ...state, ...holds, tag: 'told' as const, told: now, lastSent: now, sent: 1 };
        return { next: told, say: 'raised' };
      }
      return { next: { ...state, ...holds }, say: null };
    case 'told':
      if (holds === null) {
        if (!rule.sayCleared) return { next: { tag: 'quiet' }, say: null };
        if (inHours) return { next: { tag: 'quiet' }, say: 'cleared' };
        return { next: { ...state, tag: 'clearing' }, say: null };
      }
      if (rule.repeatMs > 0 && inHours && now - state.lastSent >= rule.repeatMs) {
        return { next: { ...state, ...holds, lastSent: now, sent: state.sent + 1 }, say: 'repeated' };
      }
      return { next: { ...state, ...holds }, say: null };
    case 'clearing':
      // It came back before the clear could be said: the owner knows it holds already.
      if (holds !== null) return { next: { ...state, ...holds, tag: 'told' }, say: null };
      if (inHours) return { next: { tag: 'quiet' }, say: 'cleared' };
      return { next: state, say: null };
  }
}
