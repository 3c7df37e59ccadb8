/**
 * Last-resort cleanup for the simulators' rigs and pty pairs: what is registered here runs when
 * this process ends without having closed them, on a normal exit and on SIGTERM, SIGINT or SIGHUP
 * (the test runner ends a test file that ran past its deadline with SIGTERM). A signal with no
 * other listener is then delivered again with its default action, so the process still ends by it.
 */
const jobs = new Set<() => void>();
let installed = false;

function runAll(): void {
  for (const job of [...jobs]) {
    jobs.delete(job);
    try {
      job();
    } catch {
      // best effort: the process is ending
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  runAll();
  process.removeListener(signal, onSignal);
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

/** Registers `job` (synchronous); call the returned function once it is no longer needed. */
export function atProcessEnd(job: () => void): () => void {
  if (!installed) {
    installed = true;
    process.once('exit', runAll);
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, onSignal);
  }
  jobs.add(job);
  return () => void jobs.delete(job);
}
