import { ErrorCodes, QrvendError } from '../../core/errors.js';
import type { DexLink, DexLinkOptions } from './index.js';

export function openDexLink(options: DexLinkOptions): DexLink {
  return {
    read: () => Promise.reject(new QrvendError(ErrorCodes.DEX_PORT, `the DEX link to ${options.port} is not built yet`)),
    close: async () => {},
  };
}
