/**
 * A VMC's DEX jack for tests and technicians (`qrvend sim dex`): serves audit files over
 * DEX/UCS or DDCMP, in turn (a VMC that resets its interim counters after each read gives a
 * different file each time; the last one repeats), with the misbehaviours the link must survive.
 */
import { SCAN_IDLE, scanUcs, type UcsScan } from '../../dex/link/ucs-frames.js';
import { DDCMP_HUNT, scanDdcmp, type DdcmpScan } from '../../dex/link/ddcmp-frames.js';
import { serveDdcmp } from './ddcmp-vmc.js';
import { serveUcs } from './ucs-vmc.js';
import { Wire } from './wire.js';
import { DEX_BEHAVIOURS, type DexBehaviour, type Script } from './script.js';

export { DEX_BEHAVIOURS, type DexBehaviour };

export interface DexSimOptions {
  /** The VMC end of a pty pair, or a serial device wired to a reader. */
  path: string;
  protocol: 'dex-ucs' | 'ddcmp';
  /** The audit files to serve, one per read, the last repeated. */
  files: Buffer[];
  /**
   * normal; initiates = sends its own ENQ and leads the first handshake (DEX/UCS); slow =
   * answers late but within the timers; silent = never answers; crc-errors = every data block
   * damaged; crc-once = the first data block damaged once; stall-mid-block = stops in the
   * middle of the second block.
   */
  behaviour: DexBehaviour;
}

export interface DexSim {
  /** Reads served whole so far. */
  readonly served: number;
  close(): Promise<void>;
}

export type { Script };

export async function startDexSim(options: DexSimOptions): Promise<DexSim> {
  if (options.files.length === 0) throw new Error('the DEX simulator needs at least one file to serve');
  let served = 0;
  const script: Script = {
    files: options.files,
    behaviour: options.behaviour,
    served: () => void served++,
    file: () => options.files[Math.min(served, options.files.length - 1)]!,
  };
  let loop: Promise<void>;
  let close: () => Promise<void>;
  if (options.protocol === 'dex-ucs') {
    let scan: UcsScan = SCAN_IDLE;
    const wire = await Wire.open(options.path, 9600, (bytes) => {
      const r = scanUcs(scan, bytes);
      scan = r.scan;
      return r.events;
    });
    loop = serveUcs(wire, script);
    close = () => wire.close();
  } else {
    let scan: DdcmpScan = DDCMP_HUNT;
    const wire = await Wire.open(options.path, 2400, (bytes) => {
      const r = scanDdcmp(scan, bytes);
      scan = r.scan;
      return r.events;
    });
    loop = serveDdcmp(wire, script);
    close = () => wire.close();
  }
  return {
    get served() {
      return served;
    },
    close: async () => {
      await close();
      await loop;
    },
  };
}
