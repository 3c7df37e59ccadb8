/** A DEX rig for tests: a pty pair, the simulated VMC on one end, the link on the other. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../../src/core/log.js';
import { openDexLink, type DexLink } from '../../../src/dex/link/index.js';
import { startDexSim, type DexBehaviour, type DexSim } from '../../../src/sim/dex/vmc.js';
import { createPtyPair, type PtyPair } from '../../support/pty.js';

/**
 * An audit file shaped like EVA-DTS 4.7's example, with enough product lines to span several
 * DEX/UCS blocks (240 bytes) and DDCMP data messages (200 bytes). `tag` makes files of a
 * sequence tell apart. The link carries bytes, whatever they say: the G85 here is not checked.
 */
export function auditFile(tag: string, products = 20): Buffer {
  const lines = ['DXS*SIM7654321*VA*V0/6*1', 'ST*001*0001', `ID1*${tag}*SIMVMC*0101*Test rig**1`, 'VA1*400*5*150*2'];
  for (let i = 1; i <= products; i++) lines.push(`PA1*${i}*50*Snack ${i}`, `PA2*${i}*${i * 50}*0*0`);
  lines.push('G85*1234', `SE*${lines.length - 1}*0001`, 'DXE*1*1');
  return Buffer.from(lines.map((l) => `${l}\r\n`).join(''), 'latin1');
}

export interface DexRig {
  pty: PtyPair;
  sim: DexSim;
  link: DexLink;
  factsPath: string;
  dir: string;
  close(): Promise<void>;
}

export async function dexRig(o: {
  protocol: 'dex-ucs' | 'ddcmp';
  linkProtocol?: 'auto' | 'dex-ucs' | 'ddcmp';
  behaviour?: DexBehaviour;
  files?: Buffer[];
  maxFileBytes?: number;
}): Promise<DexRig> {
  const pty = await createPtyPair();
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-dex-'));
  const sim = await startDexSim({
    path: pty.vmcPath,
    protocol: o.protocol,
    files: o.files ?? [auditFile('A')],
    behaviour: o.behaviour ?? 'normal',
  });
  const factsPath = join(dir, 'dex-facts.json');
  const link = openDexLink({
    port: pty.agentPath,
    protocol: o.linkProtocol ?? o.protocol,
    factsPath,
    maxFileBytes: o.maxFileBytes ?? 1024 * 1024,
    log: silentLogger(),
  });
  return {
    pty,
    sim,
    link,
    factsPath,
    dir,
    close: async () => {
      await link.close();
      await sim.close();
      await pty.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
