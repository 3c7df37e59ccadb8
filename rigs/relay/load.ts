/**
 * Start traffic for the relay's benchmark (and for the fleet simulation, which can call it with its
 * own machines): Starts to a Start URL at a bounded rate (open loop: a Start is sent on schedule
 * whether or not earlier ones were answered, up to `maxInFlight`), or as fast as `concurrency`
 * clients allow (closed loop, for Starts per second). Loopback only; bounded in count and time.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface StartTarget {
  /** http://127.0.0.1:port */
  origin: string;
  integratorName: string;
}

export interface LoadSample {
  ms: number;
  status: number;
  verdict: string | null;
  code: number | null;
}

export type BodyFor = (i: number) => string;

function isLoopback(origin: string): boolean {
  const host = new URL(origin).hostname;
  return host === 'localhost' || host === '[::1]' || host.startsWith('127.');
}

function postOne(agent: Agent, target: StartTarget, body: string): Promise<LoadSample> {
  const path = `/payment/v2/transactions/Gateway/${encodeURIComponent(target.integratorName)}/start`;
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request(
      new URL(path, target.origin),
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ms = performance.now() - started;
          try {
            const status = (
              JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Status?: { Verdict?: string; Code?: number } }
            ).Status;
            resolve({ ms, status: res.statusCode ?? 0, verdict: status?.Verdict ?? null, code: status?.Code ?? null });
          } catch {
            resolve({ ms, status: res.statusCode ?? 0, verdict: null, code: null });
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ ms: performance.now() - started, status: 0, verdict: null, code: null }));
    req.end(body);
  });
}

/** `count` Starts at `perSecond`, at most `maxInFlight` unanswered at once. */
export async function openLoop(
  target: StartTarget,
  bodyFor: BodyFor,
  options: { count: number; perSecond: number; maxInFlight: number },
): Promise<LoadSample[]> {
  if (!isLoopback(target.origin)) throw new Error('load goes to loopback only');
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxInFlight });
  const samples: LoadSample[] = [];
  const inFlight = new Set<Promise<void>>();
  const began = performance.now();
  try {
    for (let i = 0; i < options.count; i++) {
      const due = began + (i * 1000) / options.perSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (inFlight.size >= options.maxInFlight) await Promise.race(inFlight);
      const p = postOne(agent, target, bodyFor(i)).then((s) => {
        samples.push(s);
        inFlight.delete(p);
      });
      inFlight.add(p);
    }
    await Promise.all(inFlight);
  } finally {
    agent.destroy();
  }
  return samples;
}

/** `concurrency` clients sending back to back for `durationMs`; returns the samples and the elapsed time. */
export async function closedLoop(
  target: StartTarget,
  bodyFor: BodyFor,
  options: { concurrency: number; durationMs: number; maxCount: number },
): Promise<{ samples: LoadSample[]; elapsedMs: number }> {
  if (!isLoopback(target.origin)) throw new Error('load goes to loopback only');
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const samples: LoadSample[] = [];
  const began = performance.now();
  let next = 0;
  try {
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (performance.now() - began < options.durationMs && next < options.maxCount) {
          samples.push(await postOne(agent, target, bodyFor(next++)));
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return { samples, elapsedMs: performance.now() - began };
}
