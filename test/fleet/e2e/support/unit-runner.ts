/**
 * systemd's part around `qrvend run`, as systemd/qrvend.service asks for it, for tests of the real
 * daemon: ExecStartPre before the agent, ExecStopPost after it with the variables systemd sets
 * (systemd.exec(5)), and the restart decision of Restart=always with RestartPreventExitStatus=78.
 * The Exec lines are read from the unit file itself; only the installed paths are mapped to the
 * checkout's script and the rig's overlay.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentProcess, Rig } from '../../../../rigs/rig.js';
import { REPO, runScript, type ScriptRun } from '../../../scripts/helpers.js';

const UNIT = join(REPO, 'systemd/qrvend.service');
const INSTALLED_SCRIPT = '/opt/qrvend/bin/qrvend-trial';
const INSTALLED_OVERLAY = '/var/lib/qrvend/fleet-config.json';

/** argv of the unit's `key=` line, with the installed paths mapped; `-` (failure ignored) dropped. */
function execLine(key: 'ExecStartPre' | 'ExecStopPost', overlay: string): string[] {
  const line = new RegExp(`^${key}=-(.*)$`, 'm').exec(readFileSync(UNIT, 'utf8'));
  if (line === null) throw new Error(`${key}=- not in ${UNIT}`);
  return line[1]!
    .trim()
    .split(/\s+/)
    .map((word) =>
      word === INSTALLED_SCRIPT ? join(REPO, 'packaging/qrvend-trial.sh') : word === INSTALLED_OVERLAY ? overlay : word,
    );
}

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<ScriptRun> {
  return runScript(argv[0]!, argv.slice(1), { env, timeoutMs: 20_000 });
}

export interface ServiceEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What systemd would do next: Restart=always, except on RestartPreventExitStatus=78. */
  restarts: boolean;
  stopPost: ScriptRun;
}

/** ExecStartPre (its failure ignored, as "-" says), then the agent; `ready`: wait as rig.startAgent does. */
export async function startService(
  rig: Rig,
  options: { ready?: boolean } = {},
): Promise<{ agent: AgentProcess; startPre: ScriptRun }> {
  const startPre = await run(execLine('ExecStartPre', rig.overlayFile));
  const agent = options.ready ? await rig.startAgent(30_000) : await rig.startAgentProcessOnly();
  return { agent, startPre };
}

/** Waits for the agent to end, then runs ExecStopPost told how it ended. */
export async function serviceEnded(rig: Rig, agent: AgentProcess): Promise<ServiceEnd> {
  const { code, signal } = await agent.exited;
  if (rig.agent === agent) rig.agent = null;
  const env =
    signal !== null
      ? { SERVICE_RESULT: 'signal', EXIT_CODE: 'killed', EXIT_STATUS: signal.replace(/^SIG/, '') }
      : { SERVICE_RESULT: code === 0 ? 'success' : 'exit-code', EXIT_CODE: 'exited', EXIT_STATUS: String(code) };
  const stopPost = await run(execLine('ExecStopPost', rig.overlayFile), env);
  return { code, signal, restarts: code !== 78, stopPost };
}
