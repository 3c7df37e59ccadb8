/** Shared fixtures of the gateway tests: a machine configuration, device facts, a fixed clock. */
import { loadConfig } from '../../src/config/load.js';
import type { QrvendConfig } from '../../src/config/schema.js';
import type { DeviceFacts } from '../../src/gateway/envelope.js';

/** The defaults plus a catalog and a full actor/machine, so every builder member is exercised. */
export function sampleConfig(): QrvendConfig {
  return loadConfig({
    env: {},
    overrides: {
      machine: {
        terminalId: null, // -> MachineInfo.TerminalId falls back to the HwSerial
        id: 4711,
        name: 'Lobby machine',
        city: 'Vienna',
        decimalPlaces: 2,
        country: { Alpha2Code: 'AT', Alpha3Code: 'AUT', NumericCode: '040', Name: 'Austria', Intra: 'EU' },
        geoLocation: { Address: 'Main street 1', City: 'Vienna', Latitude: 48.2, Longitude: 16.37 },
      },
      actor: {
        id: 42,
        merchantId: 'M-1',
        name: 'Snacks Ltd',
        operatorId: 7,
        mcc: 5814,
        country: null,
        geoLocation: null,
      },
      customData: { Machine: '{"slot":"A"}' },
      catalog: {
        '12': { name: 'Water 0.5l', measurement: 500, unitOfMeasurement: 'ml', ageLimit: null },
        '30': { name: 'Beer', measurement: 1, unitOfMeasurement: 'Can', ageLimit: 18 },
      },
      dynamicQr: { channelId: 'CH-1' },
    },
  }).config;
}

export const DEVICE: DeviceFacts = {
  hwSerial: '10000000abcdef01',
  fwVersion: 'qrvend/0.1.0 mdb/1.4.2',
  type: 'qrvend',
};

/** 2026-03-05 14:07:09 local time. */
export const FIXED_NOW = () => new Date(2026, 2, 5, 14, 7, 9);

/** A deep copy of `obj` with the member at dotted `path` set (undefined = removed). */
export function withMember<T>(obj: T, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(obj) as Record<string, unknown>;
  const parts = path.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  let cur: Record<string | number, unknown> = copy;
  for (const part of parts.slice(0, -1)) {
    if (cur[part] === undefined || cur[part] === null) cur[part] = {};
    cur = cur[part] as Record<string | number, unknown>;
  }
  const last = parts[parts.length - 1] as string | number;
  if (value === undefined) delete cur[last];
  else cur[last] = value;
  return copy;
}
