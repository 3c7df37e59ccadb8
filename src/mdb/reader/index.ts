export * from './types.js';
export { transition, initialModel, readerStatus, isQuiescent } from './transition.js';
export { ageDeniedItems, readerConfigFrom, setconfAliases, setconfCommands, type ReaderSetup } from './config.js';
