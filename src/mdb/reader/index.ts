export * from './types.js';
export { transition, initialModel, readerStatus, isQuiescent } from './transition.js';
export { readerConfigFrom, setconfCommands, type ReaderSetup } from './config.js';
