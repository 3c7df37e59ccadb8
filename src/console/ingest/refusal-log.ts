/**
 * The log's side of refused messages (docs/console.md, "How an event is kept"): each refusal is
 * counted in the database; the log says what was refused and why, at most one line per reason
 * and kind of message a minute (with how many more came meanwhile), so a machine sending the same bad message
 * cannot flood it.
 */
import type { Logger } from '../../core/log.js';
import { storableText } from '../store/storable-text.js';

const LINE_EVERY_MS = 60_000;

export class RefusalLog {
  private readonly last = new Map<string, { at: number; more: number }>();

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  refused(machineId: string | null, reason: string, detail: string): void {
    // One line a minute per reason and kind of message (an event, a status, a health message), so
    // a refused status is not hidden behind a refused event; a bounded set of keys.
    const kind = /^(event|status|health)\b/.exec(detail)?.[1] ?? '';
    const key = `${reason} ${kind}`;
    const seen = this.last.get(key);
    const now = this.now();
    if (seen !== undefined && now - seen.at < LINE_EVERY_MS) {
      seen.more++;
      return;
    }
    this.last.set(key, { at: now, more: 0 });
    const since = seen === undefined ? {} : { refusedSinceLastLine: seen.more };
    const byDatabase = reason === 'store-refused';
    this.log.warn(
      { event: 'console.message.refused', machineId, reason, detail: storableText(detail.slice(0, 256)), ...since },
      byDatabase
        ? 'the console database refused one message as it is (the database itself works): counted on the ' +
            "machine's refusals and acknowledged, so it does not hold back the others; fix what the machine sends"
        : "a machine message was refused before storage: counted on the machine's refusals and acknowledged",
    );
  }
}
