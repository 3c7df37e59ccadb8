/** The doctor's VMC check run against a rig's configuration and the facts file its daemon writes. */
import { loadConfig } from '../../../src/config/load.js';
import { createDoctorContext } from '../../../src/doctor/context.js';
import { vmcCheck } from '../../../src/doctor/checks/vmc.js';
import { readVmcFacts, vmcFactsPath } from '../../../src/mdb/facts-file.js';
import type { AgentRig } from '../../../rigs/rig.js';
import type { VmcFacts } from '../../../src/mdb/vmc-watch.js';
import type { CheckOutcome, DoctorReport } from '../../../src/doctor/types.js';
import { runCli } from '../../doctor/helpers.js';

export function rigFacts(rig: AgentRig): VmcFacts | null {
  const { config } = loadConfig({ file: rig.configFile, env: {} });
  return readVmcFacts(vmcFactsPath(config.store.path));
}

export async function vmcDoctor(rig: AgentRig): Promise<CheckOutcome> {
  const { config } = loadConfig({ file: rig.configFile, env: {} });
  return vmcCheck.run(createDoctorContext({}), config);
}

/** The `vmc` result of `qrvend doctor --json` run as a separate process against the rig's config. */
export async function vmcDoctorCli(rig: AgentRig): Promise<CheckOutcome & { id: string }> {
  const run = await runCli(['doctor', '--json', '--config', rig.configFile]);
  const report = JSON.parse(run.stdout) as DoctorReport;
  const vmc = report.results.find((r) => r.id === 'vmc');
  if (!vmc)
    throw new Error(`no vmc check in the doctor's report: ${run.stdout.slice(0, 400)} ${run.stderr.slice(0, 400)}`);
  return vmc;
}
