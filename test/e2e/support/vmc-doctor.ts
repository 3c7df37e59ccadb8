/** The doctor's VMC check run against a rig's configuration and the facts file its daemon writes. */
import { loadConfig } from '../../../src/config/load.js';
import { createDoctorContext } from '../../../src/doctor/context.js';
import { vmcCheck } from '../../../src/doctor/checks/vmc.js';
import { readVmcFacts, vmcFactsPath } from '../../../src/mdb/facts-file.js';
import type { Rig } from '../../../src/sim/rig.js';
import type { VmcFacts } from '../../../src/mdb/vmc-watch.js';
import type { CheckOutcome } from '../../../src/doctor/types.js';

export function rigFacts(rig: Rig): VmcFacts | null {
  const { config } = loadConfig({ file: rig.configFile, env: {} });
  return readVmcFacts(vmcFactsPath(config.store.path));
}

export async function vmcDoctor(rig: Rig): Promise<CheckOutcome> {
  const { config } = loadConfig({ file: rig.configFile, env: {} });
  return vmcCheck.run(createDoctorContext({}), config);
}
