/**
 * What the main thread hands the fleet worker at its start (src/fleet/machine-link/main-side.ts), and the
 * update agent the worker builds from it.
 */
import type { MessagePort } from 'node:worker_threads';
import type { QrvendConfig } from '../../config/schema.js';
import type { Keyring } from '../../trust/keys.js';
import type { Logger } from '../../core/log.js';
import { UpdateAgent, type UpdateAgentOptions } from '../../updates/agent.js';
import { updatesDir } from '../../updates/files.js';

export interface FleetWorkerData {
  config: QrvendConfig;
  machineId: string;
  terminalId: string;
  /** The site config file (null: the daemon runs on defaults only, no fleet overlay, no config.set). */
  configFile: string | null;
  version: string;
  startedAt: string;
  paymentPort: MessagePort;
  /** A configuration trial is on: prove the round trip on the machine's own command topic (probe.ts). */
  probe: boolean;
  /** Where the worker logs: the main thread's log file (logFileOf), or null for stdout. */
  logFile: string | null;
}

type UpdateAgentPorts = Omit<UpdateAgentOptions, 'dir' | 'keyring' | 'running' | 'caFile' | 'maxDownloadBytes'>;

/** update.offer's agent (docs/updates-on-the-machine.md); null, and said, when its state cannot be read. */
export function createUpdateAgent(
  data: FleetWorkerData,
  keyring: Keyring | null,
  ports: UpdateAgentPorts & { log: Logger },
): UpdateAgent | null {
  const { config, version } = data;
  try {
    return new UpdateAgent({
      dir: updatesDir(config),
      keyring,
      running: version,
      caFile: config.updates.caFile,
      maxDownloadBytes: config.updates.maxDownloadBytes,
      ...ports,
    });
  } catch (err) {
    const why = 'update agent off: its state cannot be read; update.offer is refused';
    ports.log.error({ err: (err as Error).message }, why);
    return null;
  }
}
