/**
 * A pseudo-terminal pair for the VMC simulator, end-to-end tests, the chaos run and the
 * benchmarks: the agent opens `agentPath` as its serial port, the VMC simulator opens `vmcPath`.
 * The pair is the project's own relay (native/pty-relay.c, built by `npm ci`): two pty masters
 * joined back to back in a child process, both lines raw. Link names are stable for the life of
 * the pair, so unplug() (the relay exits, both ptys vanish) and replug() (a new pair under the
 * same names) look to the agent exactly like a USB adapter pulled out and plugged back in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPtyRelay, type PtyRelay } from '../pty/relay.js';
import { atProcessEnd } from './process-end.js';

export interface PtyPair {
  agentPath: string;
  vmcPath: string;
  unplug(): Promise<void>;
  replug(): Promise<void>;
  close(): Promise<void>;
}

export async function createPtyPair(): Promise<PtyPair> {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-pty-'));
  // Removed if this process ends before close() (the relay dies with it by itself).
  const forget = atProcessEnd(() => rmSync(dir, { recursive: true, force: true }));
  const agentPath = join(dir, 'agent');
  const vmcPath = join(dir, 'vmc');
  let relay: PtyRelay | null = null;

  const unplug = async (): Promise<void> => {
    const r = relay;
    relay = null;
    await r?.stop();
  };
  const plug = async (): Promise<void> => {
    relay = await startPtyRelay(agentPath, vmcPath);
  };

  try {
    await plug();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    forget();
    throw err;
  }
  return {
    agentPath,
    vmcPath,
    unplug,
    replug: async () => {
      await unplug();
      await plug();
    },
    close: async () => {
      await unplug();
      rmSync(dir, { recursive: true, force: true });
      forget();
    },
  };
}
