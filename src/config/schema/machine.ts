/**
 * Who the machine is in the gateway's messages: its facts, the actor, custom data, the device
 * (docs/configuration.md).
 */
import { z } from 'zod';
import { int, text, nonEmpty, CountryInfoConfig, GeoLocationConfig, JsonText } from './primitives.js';

export const MachineSection = z.strictObject({
  /** MachineInfo.TerminalId and the Start TerminalId this machine answers to; null = HwSerial. */
  terminalId: text(255).min(1).nullable(),
  /** The machine's UniQR: printed on the sticker, shown on the idle screen, accepted in Start. */
  uniQr: nonEmpty(255),
  id: z.number().int().nullable(),
  name: text(255).nullable(),
  externalId: text(200).nullable(),
  groupId: z.string().nullable(),
  type: text(50).nullable(),
  city: text(255).nullable(),
  region: text(255).nullable(),
  zipCode: text(255).nullable(),
  operatorId: text(255).nullable(),
  /** UTC offset sent as MachineInfo.Offset, e.g. "+02:00"; null = computed from local time. */
  offset: text(255).nullable(),
  decimalPlaces: int(0, 3),
  currencyCode: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 alpha-3 code such as EUR'),
  currencyNumeric: z.string().regex(/^\d{3}$/, 'must be an ISO 4217 numeric-3 code such as 978'),
  country: CountryInfoConfig.nullable(),
  geoLocation: GeoLocationConfig.nullable(),
});

export const ActorSection = z.strictObject({
  id: z.number().int().nullable(),
  merchantId: text(255).nullable(),
  name: text(255).nullable(),
  operatorId: z.number().int().nullable(),
  operatorName: text(255).nullable(),
  subMerchantId: text(255).nullable(),
  mcc: int(0, 9999).nullable(),
  dynamicUrl: text(255).nullable(),
  country: CountryInfoConfig.nullable(),
  geoLocation: GeoLocationConfig.nullable(),
});

/** CustomData members: each value is a string holding JSON text, agreed with the provider. */
export const CustomDataSection = z.strictObject({
  Actor: JsonText.optional(),
  DirectActor: JsonText.optional(),
  Distributor: JsonText.optional(),
  Machine: JsonText.optional(),
  Operator: JsonText.optional(),
  SoftDecline: JsonText.optional(),
});

export const DeviceSection = z.strictObject({
  /** DeviceInfo.Type. */
  type: nonEmpty(100),
  /** Overrides the hardware serial read from the device tree or /proc/cpuinfo. */
  hwSerial: text(255).min(1).nullable(),
});
