/**
 * The resources of the seed ("Resources and their fields"). Objects the seed marks
 * additionalProperties=false are strict (an extra member is a violation): ActorInfo, BasicInfo,
 * CustomData, DeviceInfo, PaymentInfo, Status, CountryInfo, GeoLocation. The others accept and
 * drop unknown members. Optional members also accept null, as .NET-style gateways send it.
 */
import { z } from 'zod';
import {
  amount,
  currencyCode,
  currencyNumeric,
  gatewayDateTime,
  int16,
  int32,
  int64,
  jsonText,
  maxText,
} from './primitives.js';

/** Every length of the seed's Limits table, in one place. */
export const LIMITS = {
  actorText: 255,
  machineText: 255,
  machineExternalId: 200,
  machineType: 50,
  geoText: 255,
  reasonText: 255,
} as const;

export const CountryInfoSchema = z.strictObject({
  Alpha2Code: z.string().length(2, 'must be exactly 2 characters (ISO 3166-1 alpha-2)'),
  Alpha3Code: z.string().length(3, 'must be exactly 3 characters (ISO 3166-1 alpha-3)'),
  NumericCode: z.string().length(3, 'must be exactly 3 characters (ISO 3166-1 numeric-3)'),
  Name: z.string(),
  Intra: z.string(),
});
export type CountryInfo = z.infer<typeof CountryInfoSchema>;

export const GeoLocationSchema = z.strictObject({
  Address: maxText(LIMITS.geoText).nullish(),
  City: maxText(LIMITS.geoText).nullish(),
  CountryCode: z.string().nullish(),
  State: z.string().nullish(),
  ZipCode: maxText(LIMITS.geoText).nullish(),
  Latitude: z.number().min(-90).max(90).nullish(),
  Longitude: z.number().min(-180).max(180).nullish(),
});
export type GeoLocation = z.infer<typeof GeoLocationSchema>;

export const ActorInfoSchema = z.strictObject({
  Id: int64.nullish(),
  MerchantId: maxText(LIMITS.actorText).nullish(),
  Name: maxText(LIMITS.actorText).nullish(),
  OperatorId: int64.nullish(),
  OperatorName: maxText(LIMITS.actorText).nullish(),
  SubMerchantId: maxText(LIMITS.actorText).nullish(),
  MCC: int32.nullish(),
  DynamicURL: maxText(LIMITS.actorText).nullish(),
  Country: CountryInfoSchema.nullish(),
  GeoLocation: GeoLocationSchema.nullish(),
});
export type ActorInfo = z.infer<typeof ActorInfoSchema>;

export const DENY_LIST_INDICATIONS = [0, 1, 2] as const;
export const TRANSIT_TRANSACTION_TYPES = [1, 2, 3, 7] as const;

export const TransitElementSchema = z.object({
  DenyListIndication: z.literal(DENY_LIST_INDICATIONS).nullish(),
  TransitTransactionType: z.literal(TRANSIT_TRANSACTION_TYPES).nullish(),
});
export type TransitElement = z.infer<typeof TransitElementSchema>;

export const BasicInfoSchema = z.strictObject({
  TransactionId: z.string().min(1, 'must not be empty'),
  Amount: amount,
  CurrencyCode: currencyCode,
  CurrencyNumeric: currencyNumeric,
  AgeLimitation: int16.nullish(),
  AuditNumber: int64.nullish(),
  BillingProviderId: int32.nullish(),
  IsDeferredAuthorization: z.boolean().nullish(),
  IsProductSelected: z.boolean().nullish(),
  IsSoftDeclineCompletion: z.boolean().nullish(),
  MachineAuTime: gatewayDateTime.nullish(),
  ProviderRRN: z.string().nullish(),
  ProviderTransactionId: int64.nullish(),
  PaymentMethodID: int32.nullish(),
  SiteId: int16.nullish(),
  TimeoutMS: int32.nullish(),
  TransitElement: TransitElementSchema.nullish(),
});
export type BasicInfo = z.infer<typeof BasicInfoSchema>;

export const CUSTOM_DATA_MEMBERS = [
  'Actor',
  'DirectActor',
  'Distributor',
  'Machine',
  'Operator',
  'SoftDecline',
] as const;

export const CustomDataSchema = z.strictObject({
  Actor: jsonText.nullish(),
  DirectActor: jsonText.nullish(),
  Distributor: jsonText.nullish(),
  Machine: jsonText.nullish(),
  Operator: jsonText.nullish(),
  SoftDecline: jsonText.nullish(),
});
export type CustomData = z.infer<typeof CustomDataSchema>;

export const DeviceInfoSchema = z.strictObject({
  FWVersion: z.string().nullish(),
  HwSerial: z.string().nullish(),
  Type: z.string().nullish(),
});
export type DeviceInfo = z.infer<typeof DeviceInfoSchema>;

/** MachineInfo.DecimalPlace: how many decimals amounts carry (currencies use 0..4). */
export const DecimalPlaceSchema = z.number().int('must be an integer').min(0).max(4);

export const MachineInfoSchema = z.object({
  Id: int64.nullish(),
  Name: maxText(LIMITS.machineText).nullish(),
  ExternalId: maxText(LIMITS.machineExternalId).nullish(),
  GroupId: z.string().nullish(),
  Type: maxText(LIMITS.machineType).nullish(),
  City: maxText(LIMITS.machineText).nullish(),
  Region: maxText(LIMITS.machineText).nullish(),
  ZipCode: maxText(LIMITS.machineText).nullish(),
  OperatorId: maxText(LIMITS.machineText).nullish(),
  TerminalId: maxText(LIMITS.machineText).nullish(),
  Offset: maxText(LIMITS.machineText).nullish(),
  DecimalPlace: DecimalPlaceSchema.nullish(),
  Country: CountryInfoSchema.nullish(),
  GeoLocation: GeoLocationSchema.nullish(),
});
export type MachineInfo = z.infer<typeof MachineInfoSchema>;

/**
 * PaymentInfo: issued by the gateway, sent back unchanged. AuthSource is not in the seed's table
 * but appears in its examples, so it is accepted (a closed schema would otherwise refuse the
 * gateway's own answer).
 */
export const PaymentInfoSchema = z.strictObject({
  SrvTranId: z.string().nullish(),
  AuthCode: z.string().nullish(),
  AuthAmount: amount.nullish(),
  SettAmount: amount.nullish(),
  RRN: z.string().nullish(),
  Token: z.string().nullish(),
  AuthDateTime: gatewayDateTime.nullish(),
  SettDateTime: gatewayDateTime.nullish(),
  TraceNumber: z.string().nullish(),
  AdditionalData: z.string().nullish(),
  IsGatewayTimeout: z.boolean().nullish(),
  ProviderExternalData: z.string().nullish(),
  InitiateTranReference: int64.nullish(),
  IsRevalueCard: z.boolean().nullish(),
  AuthSource: z.string().nullish(),
});
export type PaymentInfo = z.infer<typeof PaymentInfoSchema>;

/** Product item: Code is the MDB item number and Price the vend price (docs/decisions/gateway-interface.md). */
export const ProductItemSchema = z.object({
  Code: int32,
  Price: amount,
  Name: z.string().nullish(),
  Measurement: int32.nullish(),
  UnitOfMeasurement: z.string().nullish(),
});
export type ProductItem = z.infer<typeof ProductItemSchema>;

/** Cancel/Void ReasonCode (int16) and ReasonText (max 255). */
export const ReasonCodeSchema = int16;
export const ReasonTextSchema = maxText(LIMITS.reasonText);

/** The members every gateway request starts with (Authorization, Settlement, Cancel, GenerateQR, Inquiry, Void). */
export const RequestHeadMembers = {
  ActorInfo: ActorInfoSchema.nullish(),
  BasicInfo: BasicInfoSchema,
  CustomData: CustomDataSchema.nullish(),
  DeviceInfo: DeviceInfoSchema.nullish(),
  MachineInfo: MachineInfoSchema.nullish(),
};
