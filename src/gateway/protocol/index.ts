/** The gateway protocol: schemas, types, formats, codes and validators. Import from here. */
export * from './primitives.js';
export * from './codes.js';
export * from './status.js';
export * from './validate.js';
export * from './objects.js';
export * from './static-qr.js';
export * from './dynamic-qr.js';
export * from './operations.js';
export * from './start.js';
