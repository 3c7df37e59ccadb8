'use strict';
/**
 * What each of the daemon's threads does, counted rather than timed (a busy machine changes the
 * latency, not the count): messages each thread posts to another (by message type), async
 * resources it creates (timers, immediates, sockets... by type), and its own CPU time and context
 * switches (/proc/thread-self). A diagnostic for the vend benchmarks, never loaded in production.
 *
 * Loaded with `--require` (which Node applies to worker threads too, where `--import` is not):
 * QRVEND_BENCH_DAEMON_NODE_ARGS="--require <repo>/bench/support/thread-tally.cjs" and
 * QRVEND_TALLY_DIR=<dir>. On SIGUSR2 to the daemon, every thread writes its counts so far to
 * <dir>/tally-<threadId>.json; two dumps around a run of vends give the work per vend
 * (bench/thread-tally.ts). Plain CommonJS, not compiled: it is loaded before anything else.
 */
const { createHook } = require('node:async_hooks');
const { readFileSync, readlinkSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const wt = require('node:worker_threads');

const dir = process.env.QRVEND_TALLY_DIR;
if (dir) {
  const posts = Object.create(null);
  const resources = Object.create(null);
  const bump = (table, key) => (table[key] = (table[key] || 0) + 1);
  createHook({ init: (_id, type) => bump(resources, type) }).enable();
  const typeOf = (message) =>
    message !== null && typeof message === 'object' && typeof message.type === 'string' ? message.type : typeof message;
  // Worker#postMessage posts on an internal MessagePort: counted once, as the worker's.
  let inWorkerPost = false;
  const wrap = (proto, to) => {
    const original = proto.postMessage;
    proto.postMessage = function postMessage(message, ...rest) {
      if (inWorkerPost) return original.call(this, message, ...rest);
      bump(posts, `${to(this)} ${typeOf(message)}`);
      inWorkerPost = proto === wt.Worker.prototype;
      try {
        return original.call(this, message, ...rest);
      } finally {
        inWorkerPost = false;
      }
    };
  };
  wrap(wt.Worker.prototype, () => 'to-worker');
  wrap(wt.MessagePort.prototype, (port) => (port === wt.parentPort ? 'to-parent' : 'on-port'));

  const role = () => {
    if (wt.isMainThread) return 'main';
    const d = wt.workerData;
    if (d && typeof d === 'object') {
      if ('probe' in d && 'machineId' in d) return 'fleet';
      if ('secretToken' in d) return 'payment';
    }
    return 'worker';
  };
  const self = () => {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    const [runNs, waitNs] = readFileSync('/proc/thread-self/schedstat', 'utf8').trim().split(/\s+/).map(Number);
    const status = readFileSync('/proc/thread-self/status', 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)$`, 'm').exec(status)?.[1] ?? NaN);
    return {
      tid,
      runNs,
      waitNs,
      voluntarySwitches: field('voluntary_ctxt_switches'),
      involuntarySwitches: field('nonvoluntary_ctxt_switches'),
    };
  };
  const dump = () => {
    const out = { threadId: wt.threadId, role: role(), ...self(), posts, resources };
    writeFileSync(join(dir, `tally-${wt.threadId}.json`), JSON.stringify(out));
  };
  // The main thread takes the signal and passes it on to every thread; the channel is unref'd.
  const channel = new wt.BroadcastChannel('qrvend-thread-tally');
  channel.unref();
  channel.onmessage = () => dump();
  if (wt.isMainThread) {
    process.on('SIGUSR2', () => {
      dump();
      channel.postMessage('dump');
    });
  }
}
