/**
 * The reader as the running daemon sees it. The daemon reports its state to systemd (STATUS=,
 * shown by `systemctl status qrvend`), so the doctor reads it from there instead of opening the
 * serial port the daemon holds.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Check, CheckOutcome } from '../types.js';

const UNIT = 'qrvend.service';

function systemctlShow(): Promise<Record<string, string> | null> {
  return new Promise((resolve) => {
    execFile(
      'systemctl',
      ['show', UNIT, '--property=LoadState,ActiveState,SubState,StatusText,MainPID,NRestarts'],
      { timeout: 3_000 },
      (err, stdout) => {
        if (err) return resolve(null);
        const props: Record<string, string> = {};
        for (const line of stdout.split('\n')) {
          const eq = line.indexOf('=');
          if (eq > 0) props[line.slice(0, eq)] = line.slice(eq + 1);
        }
        resolve(props);
      },
    );
  });
}

function fromSystemd(p: Record<string, string>): CheckOutcome {
  const status = p.StatusText ? `: ${p.StatusText}` : '';
  const restarts = Number(p.NRestarts ?? 0);
  const details = {
    activeState: p.ActiveState,
    subState: p.SubState,
    statusText: p.StatusText ?? null,
    mainPid: Number(p.MainPID ?? 0),
    restarts,
  };
  if (p.LoadState === 'not-found') {
    return {
      status: 'WARN',
      summary: 'the qrvend service is not installed here',
      action: 'install it with scripts/install.sh or the .deb',
      details,
    };
  }
  switch (p.ActiveState) {
    case 'active':
      return restarts > 0
        ? {
            status: 'WARN',
            summary: `daemon running${status}, but restarted ${restarts} time(s)`,
            action: 'see why: qrvend-logs --boot --level warn',
            details,
          }
        : { status: 'OK', summary: `daemon running (pid ${details.mainPid})${status}`, details };
    case 'activating':
    case 'reloading':
      return {
        status: 'WARN',
        summary: `daemon starting${status}`,
        action:
          'if this lasts, the VMC has not enabled the reader: check the machine is in sales mode, then qrvend-logs -f',
        details,
      };
    case 'failed':
      return {
        status: 'FAIL',
        summary: `the service has failed${status}`,
        action: 'see why: qrvend-logs --boot --level warn; then systemctl restart qrvend',
        details,
      };
    default:
      return {
        status: 'WARN',
        summary: `daemon not running (${p.ActiveState ?? 'unknown'}): the reader is off`,
        action: 'systemctl start qrvend',
        details,
      };
  }
}

export const readerCheck: Check = {
  id: 'reader',
  title: 'reader state (daemon)',
  needsConfig: true,
  async run(ctx) {
    if (existsSync('/run/systemd/system')) {
      const props = await systemctlShow();
      if (props !== null) return fromSystemd(props);
    }
    if (ctx.facts.serial === 'busy') {
      return {
        status: 'WARN',
        summary: 'systemd is not running here; the serial port is held by some process (a daemon started by hand?)',
        action: 'check who holds it: fuser -v <mdb.port>',
        details: { systemd: false },
      };
    }
    const inference =
      ctx.facts.serial === 'sim'
        ? 'its reader state cannot be read'
        : 'nothing holds the serial port: no daemon, the reader is off';
    return {
      status: 'WARN',
      summary: `systemd is not running here; ${inference}`,
      action: 'start the agent (systemctl start qrvend, or qrvend run --config FILE)',
      details: { systemd: false },
    };
  },
};
