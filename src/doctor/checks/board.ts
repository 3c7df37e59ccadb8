/** The adapter board answers `V` with its firmware version (skipped while the daemon holds the port). */
import { probeBoard } from '../../mdb/probe.js';
import type { Check } from '../types.js';

const PROBE_TIMEOUT_MS = 2_000;

export const boardCheck: Check = {
  id: 'board',
  title: 'MDB adapter board answers',
  needsConfig: true,
  async run(ctx, config) {
    const { port, baudRate } = config.mdb;
    switch (ctx.facts.serial) {
      case 'sim':
        return { status: 'OK', summary: 'simulated VMC: no board to ask', details: { port } };
      case 'busy':
        return {
          status: 'WARN',
          summary: 'daemon running, board check skipped (the port is held)',
          action: 'to ask the board directly: systemctl stop qrvend; qrvend doctor; systemctl start qrvend',
          details: { port, skipped: true },
        };
      case 'usable':
        break;
      default:
        return {
          status: 'WARN',
          summary: 'skipped: the serial device is not usable (see the serial check)',
          action: 'fix the serial check first',
          details: { port, skipped: true },
        };
    }
    try {
      const { firmware, boardId } = await probeBoard({ path: port, baudRate, timeoutMs: PROBE_TIMEOUT_MS });
      return {
        status: 'OK',
        summary: `board ${boardId} answers, firmware ${firmware}`,
        details: { port, firmware, boardId },
      };
    } catch (err) {
      return {
        status: 'FAIL',
        summary: `no answer from the board on ${port}: ${(err as Error).message}`,
        action:
          `check the board's power and wiring (TX/RX), that mdb.baudRate (` +
          `${baudRate}) matches the board, and reset the board`,
        details: { port, baudRate },
      };
    }
  },
};
