/**
 * Request builders: turn the configuration, the device's facts and a flow's few values into the
 * complete request bodies of each gateway operation. Every builder output, encoded for the wire
 * (wire/encode.ts), validates against its operation's schema (tested). Amounts are rounded to the
 * machine's decimal places; a PaymentInfo handed in is the exact text the gateway returned.
 */
import type { QrvendConfig } from '../config/schema.js';
import {
  formatGatewayDateTime,
  roundAmount,
  truncateText,
  ReasonCodes,
  LIMITS,
  type ActorInfo,
  type AuthorizationRequest,
  type BasicInfo,
  type CancelRequest,
  type CountryInfo,
  type CustomData,
  type DeviceInfo,
  type GenerateQRRequest,
  type GenerateQRResponse,
  type GeoLocation,
  type InquiryRequest,
  type MachineInfo,
  type ProductItem,
  type SettlementRequest,
  type VoidRequest,
} from './protocol/index.js';
import { composePaymentInfo, GATEWAY_TIMEOUT_PAYMENT_INFO, type RawJson } from './wire/index.js';

/** What the device layer knows about the hardware (src/device). */
export interface DeviceFacts {
  hwSerial: string;
  fwVersion: string;
  type: string;
}

/** One vend as the flows know it: the MDB item number and the price charged. */
export interface SoldItem {
  item: number;
  price: number;
}

export type Clock = () => Date;

export type EnvelopeConfig = Pick<
  QrvendConfig,
  'machine' | 'actor' | 'customData' | 'device' | 'catalog' | 'dynamicQr'
>;

/** PaymentInfo of a Cancel/Void after an Authorization/Inquiry that was never answered. */
export function gatewayTimeoutPaymentInfo(): RawJson {
  return GATEWAY_TIMEOUT_PAYMENT_INFO;
}

/**
 * PaymentInfo for Inquiry after GenerateQR: SrvTranId and RRN from QRData, AuthAmount = the
 * amount of the QR with the currency's decimals (docs/decisions/gateway-interface.md).
 */
export function paymentInfoFromGenerateQR(
  response: Pick<GenerateQRResponse, 'QRData'>,
  authAmount: number,
  decimalPlaces: number,
): RawJson {
  return composePaymentInfo(
    { SrvTranId: response.QRData?.SrvTranId ?? null, RRN: response.QRData?.RRN ?? null, AuthAmount: authAmount },
    decimalPlaces,
  );
}

/** A request as built for the wire: PaymentInfo is JSON text (kept exactly as the gateway sent it). */
export type Outgoing<R> = Omit<R, 'PaymentInfo'> &
  ('PaymentInfo' extends keyof R ? { PaymentInfo?: RawJson } : unknown);

/** Default ReasonText for the ReasonCode values qrvend uses. */
export const REASON_TEXT: Readonly<Record<number, string>> = {
  [ReasonCodes.UnknownError]: 'unknown error',
  [ReasonCodes.CancelledByConsumer]: 'cancelled by consumer',
  [ReasonCodes.CancelledByMachine]: 'cancelled by machine',
};

/** Copies the members whose value is not null or undefined (config uses null for "not set"). */
function defined<T extends object>(entries: { [K in keyof T]?: T[K] | null | undefined }): T {
  const out: Partial<T> = {};
  for (const [key, value] of Object.entries(entries) as [keyof T, T[keyof T] | null | undefined][]) {
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out as T;
}

function geoLocation(g: NonNullable<QrvendConfig['machine']['geoLocation']>): GeoLocation {
  return defined<GeoLocation>({ ...g });
}

function country(c: NonNullable<QrvendConfig['machine']['country']>): CountryInfo {
  return {
    Alpha2Code: c.Alpha2Code,
    Alpha3Code: c.Alpha3Code,
    NumericCode: c.NumericCode,
    Name: c.Name,
    Intra: c.Intra,
  };
}

/** Local UTC offset as "+02:00" (MachineInfo.Offset when config does not set one). */
export function utcOffset(date: Date): string {
  const minutes = -date.getTimezoneOffset();
  const sign = minutes >= 0 ? '+' : '-';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

export function buildActorInfo(config: EnvelopeConfig): ActorInfo {
  const a = config.actor;
  return defined<ActorInfo>({
    Id: a.id,
    MerchantId: a.merchantId,
    Name: a.name,
    OperatorId: a.operatorId,
    OperatorName: a.operatorName,
    SubMerchantId: a.subMerchantId,
    MCC: a.mcc,
    DynamicURL: a.dynamicUrl,
    Country: a.country ? country(a.country) : null,
    GeoLocation: a.geoLocation ? geoLocation(a.geoLocation) : null,
  });
}

export function buildMachineInfo(config: EnvelopeConfig, device: DeviceFacts, now: Date): MachineInfo {
  const m = config.machine;
  return defined<MachineInfo>({
    Id: m.id,
    Name: m.name,
    ExternalId: m.externalId,
    GroupId: m.groupId,
    Type: m.type,
    City: m.city,
    Region: m.region,
    ZipCode: m.zipCode,
    OperatorId: m.operatorId,
    TerminalId: m.terminalId ?? hwSerialOf(config, device),
    Offset: m.offset ?? utcOffset(now),
    DecimalPlace: m.decimalPlaces,
    Country: m.country ? country(m.country) : null,
    GeoLocation: m.geoLocation ? geoLocation(m.geoLocation) : null,
  });
}

function hwSerialOf(config: EnvelopeConfig, device: DeviceFacts): string {
  return config.device.hwSerial ?? device.hwSerial;
}

export function buildDeviceInfo(config: EnvelopeConfig, device: DeviceFacts): DeviceInfo {
  return { FWVersion: device.fwVersion, HwSerial: hwSerialOf(config, device), Type: device.type };
}

/** CustomData from config, or null when config sets no member (the member is then left out). */
export function buildCustomData(config: EnvelopeConfig): CustomData | null {
  const c = defined<CustomData>({ ...config.customData });
  return Object.keys(c).length === 0 ? null : c;
}

/** One Product item per vend; Name, Measurement and UnitOfMeasurement from the catalog or defaults. */
export function buildProducts(config: EnvelopeConfig, items: readonly SoldItem[]): ProductItem[] {
  return items.map(({ item, price }) => {
    const entry = config.catalog[String(item)];
    return {
      Code: item,
      Price: roundAmount(price, config.machine.decimalPlaces),
      Name: entry?.name ?? `Item ${item}`,
      Measurement: entry?.measurement ?? 1,
      UnitOfMeasurement: entry?.unitOfMeasurement ?? 'Unit',
    };
  });
}

/** The highest minimum age the catalog gives any of `items`, or null. */
export function ageLimitFor(config: EnvelopeConfig, items: readonly SoldItem[]): number | null {
  let limit: number | null = null;
  for (const { item } of items) {
    const age = config.catalog[String(item)]?.ageLimit ?? null;
    if (age !== null && (limit === null || age > limit)) limit = age;
  }
  return limit;
}

/** The highest minimum age of the whole catalog, or null (a static QR approval must vouch for every item). */
export function highestAgeLimit(config: Pick<EnvelopeConfig, 'catalog'>): number | null {
  let limit: number | null = null;
  for (const entry of Object.values(config.catalog)) {
    const age = entry.ageLimit ?? null;
    if (age !== null && age > 0 && (limit === null || age > limit)) limit = age;
  }
  return limit;
}

/**
 * What closes an authorization repeats from it (docs/decisions/gateway-interface.md): its MachineAuTime and
 * AgeLimitation.
 */
export interface ClosedAuthorization {
  /** MachineAuTime of the authorization this request closes (ddMMyyHHmmss, as it was sent). */
  machineAuTime: string;
  /** BasicInfo.AgeLimitation the authorization carried, or null. */
  ageLimit: number | null;
}

export interface AuthorizationArgs {
  txId: string;
  amount: number;
  ageLimit?: number | null;
  at?: Date;
}
export interface SettlementArgs extends ClosedAuthorization {
  txId: string;
  amount: number;
  paymentInfo: RawJson;
  products: readonly SoldItem[];
}
export interface CancelArgs extends ClosedAuthorization {
  txId: string;
  amount: number;
  paymentInfo: RawJson;
  reasonCode: number;
  reasonText?: string;
}
export interface GenerateQRArgs {
  txId: string;
  amount: number;
  products: readonly SoldItem[];
  at?: Date;
}
export interface InquiryArgs {
  txId: string;
  amount: number;
  paymentInfo: RawJson;
  /** 1 for the first Inquiry of a transaction. */
  attempt: number;
  isLast: boolean;
  products: readonly SoldItem[];
}
export type VoidArgs = CancelArgs;

export interface RequestBuilders {
  readonly actorInfo: ActorInfo;
  readonly deviceInfo: DeviceInfo;
  readonly customData: CustomData | null;
  machineInfo(): MachineInfo;
  /**
   * BasicInfo.AgeLimitation of a Dynamic QR payment for `products` (the highest catalog ageLimit among them), or null.
   */
  ageLimit(products: readonly SoldItem[]): number | null;
  authorization(args: AuthorizationArgs): AuthorizationRequest;
  settlement(args: SettlementArgs): Outgoing<SettlementRequest>;
  cancel(args: CancelArgs): Outgoing<CancelRequest>;
  generateQR(args: GenerateQRArgs): Outgoing<GenerateQRRequest>;
  inquiry(args: InquiryArgs): Outgoing<InquiryRequest>;
  void(args: VoidArgs): Outgoing<VoidRequest>;
}

/** Builders bound to one machine's configuration and hardware; `now` is injectable for tests. */
export function createRequestBuilders(
  config: EnvelopeConfig,
  device: DeviceFacts,
  now: Clock = () => new Date(),
): RequestBuilders {
  const actorInfo = buildActorInfo(config);
  const deviceInfo = buildDeviceInfo(config, device);
  const customData = buildCustomData(config);
  const dp = config.machine.decimalPlaces;

  function basicInfo(txId: string, amount: number, machineAuTime: string, ageLimit: number | null): BasicInfo {
    return defined<BasicInfo>({
      TransactionId: txId,
      Amount: roundAmount(amount, dp),
      CurrencyCode: config.machine.currencyCode,
      CurrencyNumeric: config.machine.currencyNumeric,
      AgeLimitation: ageLimit,
      MachineAuTime: machineAuTime,
    });
  }

  /**
   * The members every request starts with, in the seed's order. MachineAuTime is the time of the
   * authorization (docs/decisions/gateway-interface.md): now for the requests that ask for one, the recorded time of
   * the authorization for the requests that close one.
   */
  function head(txId: string, amount: number, ageLimit: number | null, machineAuTime?: string) {
    const at = now();
    return defined<AuthorizationRequest>({
      ActorInfo: actorInfo,
      BasicInfo: basicInfo(txId, amount, machineAuTime ?? formatGatewayDateTime(at), ageLimit),
      CustomData: customData,
      DeviceInfo: deviceInfo,
      MachineInfo: buildMachineInfo(config, device, at),
    });
  }

  function reason(code: number, text: string | undefined): { ReasonCode: number; ReasonText: string } {
    return {
      ReasonCode: code,
      ReasonText: truncateText(text ?? REASON_TEXT[code] ?? 'unknown error', LIMITS.reasonText),
    };
  }

  return {
    actorInfo,
    deviceInfo,
    customData,
    machineInfo: () => buildMachineInfo(config, device, now()),
    ageLimit: (products) => ageLimitFor(config, products),
    authorization: ({ txId, amount, ageLimit, at }) =>
      head(txId, amount, ageLimit ?? null, at ? formatGatewayDateTime(at) : undefined),
    settlement: ({ txId, amount, paymentInfo, products, machineAuTime, ageLimit }) => ({
      ...head(txId, amount, ageLimit, machineAuTime),
      PaymentInfo: paymentInfo,
      Products: buildProducts(config, products),
    }),
    cancel: ({ txId, amount, paymentInfo, reasonCode, reasonText, machineAuTime, ageLimit }) => ({
      ...head(txId, amount, ageLimit, machineAuTime),
      PaymentInfo: paymentInfo,
      ...reason(reasonCode, reasonText),
    }),
    generateQR: ({ txId, amount, products, at }) => ({
      ...head(txId, amount, ageLimitFor(config, products), at ? formatGatewayDateTime(at) : undefined),
      ...(config.dynamicQr.channelId !== null ? { ChannelId: config.dynamicQr.channelId } : {}),
      Product: buildProducts(config, products),
    }),
    inquiry: ({ txId, amount, paymentInfo, attempt, isLast, products }) => ({
      ...head(txId, amount, ageLimitFor(config, products)),
      PaymentInfo: paymentInfo,
      Polling: { IsLastPolling: isLast, PollingAttemptCounter: attempt },
      Products: buildProducts(config, products),
    }),
    void: ({ txId, amount, paymentInfo, reasonCode, reasonText, machineAuTime, ageLimit }) => ({
      ...head(txId, amount, ageLimit, machineAuTime),
      PaymentInfo: paymentInfo,
      ...reason(reasonCode, reasonText),
    }),
  };
}
