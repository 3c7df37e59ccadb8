/**
 * What a rig knows of a running agent, whether it runs as a process (rigs/rig.ts) or in the rig's
 * own process (rigs/in-process-rig.ts): its NDJSON log lines as they come, waits for one, the
 * Start endpoint's origin once the payment worker is ready, and how it ended.
 */

export interface LogLine {
  level: string;
  msg: string;
  [key: string]: unknown;
}

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface AgentHandle {
  /** Every NDJSON log line so far (non-JSON lines are kept as { level: 'raw', msg }). */
  readonly logs: LogLine[];
  readonly stderr: string[];
  /** The Start endpoint's origin (scheme://host:port), known once the payment worker is ready. */
  readonly startOrigin: string | null;
  /** Settles once the agent ended and its output was read to the end (so `logs` is complete). */
  readonly exited: Promise<AgentExit>;
  waitForLog(match: (line: LogLine) => boolean, timeoutMs: number, what?: string): Promise<LogLine>;
}

/** The log lines of one run of an agent, and the waits on them. */
export class LogBook {
  readonly logs: LogLine[] = [];
  startOrigin: string | null = null;
  private readonly waiters = new Set<{ match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }>();

  constructor(
    private readonly exited: Promise<AgentExit>,
    private readonly stderr: string[],
  ) {}

  /** One line of the agent's output (its trailing newline cut off). */
  add(text: string): void {
    let line: LogLine;
    try {
      line = JSON.parse(text) as LogLine;
    } catch {
      line = { level: 'raw', msg: text };
    }
    this.logs.push(line);
    if (line.msg === 'payment worker ready' && typeof line.startUrl === 'string')
      this.startOrigin = new URL(line.startUrl).origin;
    for (const w of this.waiters) if (w.match(line)) (this.waiters.delete(w), w.resolve(line));
  }

  waitForLog(match: (line: LogLine) => boolean, timeoutMs: number, what = 'a log line'): Promise<LogLine> {
    const seen = this.logs.find(match);
    if (seen) return Promise.resolve(seen);
    const { stderr, waiters } = this;
    return new Promise((resolve, reject) => {
      const waiter = { match, resolve: (l: LogLine) => (clearTimeout(timer), resolve(l)) };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(
          new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr: ${stderr.join('').slice(-2000)}`),
        );
      }, timeoutMs);
      waiters.add(waiter);
      void this.exited.then(({ code, signal }) => {
        if (!waiters.has(waiter)) return;
        waiters.delete(waiter);
        clearTimeout(timer);
        reject(
          new Error(
            `agent exited (code ${code}, signal ${signal}) while waiting ` +
              `for ${what}; stderr: ${stderr.join('').slice(-2000)}`,
          ),
        );
      });
    });
  }
}

/** Cuts a stream of text into lines: `push` each chunk, each whole line goes to `onLine`. */
export function lineSplitter(onLine: (text: string) => void): (chunk: string) => void {
  let buffered = '';
  return (chunk) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      onLine(text);
    }
  };
}
