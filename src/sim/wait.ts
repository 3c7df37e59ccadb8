/** Waiting helpers for the demo, the rig and the tests that drive the simulators. */
import type { VmcSimulator } from './vmc/index.js';
import type { BoardCommand } from '../mdb/codec/index.js';

/** Polls `check` until it holds, or rejects naming `what` after the deadline. */
export async function until(check: () => boolean, timeoutMs: number, what: string, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The next host command the VMC simulator receives that matches, or a rejection naming `what`. */
export function nextCommand(
  vmc: VmcSimulator,
  match: (c: BoardCommand) => boolean,
  timeoutMs: number,
  what: string,
): Promise<BoardCommand> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      vmc.off('command', onCommand);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    const onCommand = (c: BoardCommand) => {
      if (!match(c)) return;
      clearTimeout(timer);
      vmc.off('command', onCommand);
      resolve(c);
    };
    vmc.on('command', onCommand);
  });
}
