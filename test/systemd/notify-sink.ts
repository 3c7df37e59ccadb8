/**
 * systemd's end of NOTIFY_SOCKET for tests: test/native/notify-sink.c bound at a fresh path,
 * every datagram it receives kept as one line (newlines in a message become spaces). BARRIER=1
 * pipes are closed as systemd closes them, so the helper's barrier completes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SINK = fileURLToPath(new URL('../native/notify-sink', import.meta.url));

export interface NotifySink {
  /** The value for NOTIFY_SOCKET. */
  readonly path: string;
  /** Every message received so far, oldest first. */
  messages(): string[];
  /** SIGSTOP / SIGCONT: a systemd that does not read its socket. */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startNotifySink(): Promise<NotifySink> {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-notify-sink-'));
  const path = join(dir, 'notify');
  const child = spawn(SINK, [path], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let buffered = '';
  let resolveReady!: () => void;
  let rejectReady!: (err: Error) => void;
  const ready = new Promise<void>((resolve, reject) => ((resolveReady = resolve), (rejectReady = reject)));
  child.once('error', rejectReady);
  child.once('exit', (code) => rejectReady(new Error(`notify-sink exited (${code}) before it was ready`)));
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => {
    buffered += text;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    for (const line of parts) {
      if (line === 'ready') resolveReady();
      else lines.push(line);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await ready;
  return {
    path,
    messages: () => [...lines],
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    close: async () => {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
