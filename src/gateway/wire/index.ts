/** The exact bytes on the wire: amounts with the currency's decimals, PaymentInfo kept as received. */
export * from './raw-json.js';
export * from './member-text.js';
export * from './amount-text.js';
export * from './payment-info.js';
export * from './encode.js';
