/**
 * The numeric codes qrvend and its simulator agree on (docs/decisions/gateway-interface.md): Status.Code decline
 * reasons and the Cancel/Void ReasonCode values. The seed gives no list; this is the one list.
 */
export const DeclineCodes = {
  InsufficientFunds: 1,
  TransactionIdUnknown: 2,
  CountLimitExceeded: 3,
  AmountLimitExceeded: 4,
  SuspectedFraud: 5,
  GeneralSystemFailure: 6,
  InvalidAmount: 7,
  FormatError: 8,
  NotAllowed: 9,
  /** Settlement without an amount (seed, Errors 4). */
  AmountMissing: 10,
  MachineNotResponding: 30,
  UnknownMachine: 50,
  Timeout: 992,
  /** Inquiry only: not paid yet, keep polling. */
  Pending: 993,
  /** Start: TransactionId unknown or already used. */
  TransactionIdUnknownOrDuplicate: 996,
  MissingMandatory: 997,
  ValidationError: 998,
  GeneralException: 999,
} as const;

export type DeclineCode = (typeof DeclineCodes)[keyof typeof DeclineCodes];

/** Human wording of each decline code, for displays, logs and the simulator's StatusMessage. */
export const DECLINE_CODE_TEXT: Readonly<Record<number, string>> = {
  1: 'insufficient funds',
  2: 'transaction ID unknown',
  3: 'count limit exceeded',
  4: 'amount limit exceeded',
  5: 'suspected fraud',
  6: 'general system failure',
  7: 'invalid amount',
  8: 'format error',
  9: 'not allowed',
  10: 'amount missing',
  30: 'machine not responding',
  50: 'unknown machine',
  992: 'timeout',
  993: 'pending',
  996: 'transaction ID unknown or duplicate',
  997: 'missing mandatory parameters',
  998: 'validation error',
  999: 'general exception',
};

/** Cancel/Void ReasonCode values qrvend sends. */
export const ReasonCodes = {
  UnknownError: 0,
  CancelledByConsumer: 2,
  /** Vend failure, reader fault, timeout. */
  CancelledByMachine: 3,
} as const;

export type ReasonCode = (typeof ReasonCodes)[keyof typeof ReasonCodes];
