/** The wallet simulator: programmatic Start for tests and the demo. */
export {
  sendStart,
  buildStartBody,
  startEndpoint,
  newWalletTransactionId,
  readTokenFile,
  type SendStartOptions,
  type StartResult,
} from './send-start.js';
