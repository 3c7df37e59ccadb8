/**
 * What the simulated DEX jack serves and how it misbehaves, shared by the jack (vmc.ts) and its
 * two protocol ends (ucs-vmc.ts, ddcmp-vmc.ts) without those importing the jack.
 */
export const DEX_BEHAVIOURS = [
  'normal',
  'initiates',
  'slow',
  'silent',
  'crc-errors',
  'crc-once',
  'stall-mid-block',
  'no-data',
] as const;
export type DexBehaviour = (typeof DEX_BEHAVIOURS)[number];

export interface Script {
  files: Buffer[];
  behaviour: DexBehaviour;
  /** Called when a read ended well; the next read gets the next file. */
  served(): void;
  file(): Buffer;
}
