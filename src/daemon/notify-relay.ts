/**
 * systemd notifications from the machine loop, sent by the payment worker.
 *
 * Sending one means starting `systemd-notify` (Node cannot write to a unix datagram socket), and
 * starting a child process stalls the calling thread for a few milliseconds (fork of a large
 * process): too long for the machine loop, which must answer a vend request within one. So the
 * main thread only posts a message; the payment worker runs the command. The watchdog keeps its
 * meaning: the ping is posted by the main thread's timer, so a stuck machine loop stops the pings
 * (and so does a stuck payment worker, which deserves the same restart).
 */
import type { Logger } from '../core/log.js';
import type { MainToPayment, NotifyWhat } from '../ipc/messages.js';
import { createNotifier, watchdogIntervalFrom, type Notifier } from './systemd-notify.js';

/** The main thread's notifier: every call becomes a `notify` message to the payment worker. */
export function relayNotifier(post: (message: MainToPayment) => void, env: NodeJS.ProcessEnv = process.env, pid = process.pid): Notifier {
  const send = (what: NotifyWhat, text: string | null) => post({ type: 'notify', what, text });
  return {
    enabled: Boolean(env.NOTIFY_SOCKET),
    watchdogIntervalMs: watchdogIntervalFrom(env, pid),
    ready: (status) => send('ready', status ?? null),
    watchdog: () => send('watchdog', null),
    stopping: () => send('stopping', null),
    status: (text) => send('status', text),
  };
}

/** The payment worker's side: carries out what the main thread asked for. */
export function notifyHandler(log: Logger, notifier: Notifier = createNotifier(log)): (what: NotifyWhat, text: string | null) => void {
  return (what, text) => {
    switch (what) {
      case 'ready':
        notifier.ready(text ?? undefined);
        return;
      case 'watchdog':
        notifier.watchdog();
        return;
      case 'stopping':
        notifier.stopping();
        return;
      case 'status':
        notifier.status(text ?? '');
        return;
    }
  };
}
