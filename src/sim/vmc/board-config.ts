/**
 * The simulated board's cashless-slave configuration: what C,SETCONF set, as a firmware that may
 * know only some keys (or ignore some without a word) keeps it. Lost at power-up, like the board's.
 */
import { DEFAULT_ADDRESS, type BoardFirmware } from './quirks.js';

export type SetconfAnswer = 'ok' | 'refused' | 'silent';

export class BoardConfig {
  private readonly values = new Map<string, string>();
  private readonly firmware: Required<BoardFirmware>;

  constructor(firmware: BoardFirmware = {}) {
    this.firmware = {
      knownKeys: firmware.knownKeys ?? null,
      addressKey: firmware.addressKey ?? 'mdb-address',
      alwaysIdleKey: firmware.alwaysIdleKey ?? 'mdb-always-idle',
      silentKeys: firmware.silentKeys ?? [],
    };
  }

  set(key: string, value: string): SetconfAnswer {
    if (this.firmware.silentKeys.includes(key)) return 'silent';
    if (this.firmware.knownKeys !== null && !this.firmware.knownKeys.includes(key)) return 'refused';
    this.values.set(key, value);
    return 'ok';
  }

  /** A key's value as set (the simulator's other options, e.g. cash-sale reporting, read it). */
  get(key: string): string | undefined {
    return this.values.get(key);
  }

  /** The MDB address the board answers at (the board's default until configured). */
  get address(): string {
    return this.values.get(this.firmware.addressKey) ?? DEFAULT_ADDRESS;
  }

  get alwaysIdle(): boolean {
    return this.values.get(this.firmware.alwaysIdleKey) === '1';
  }

  clear(): void {
    this.values.clear();
  }

  snapshot(): Record<string, string> {
    return Object.fromEntries(this.values);
  }
}
