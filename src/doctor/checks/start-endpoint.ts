/**
 * How a wallet's Start reaches this machine (docs/decisions/fleet-trust.md item 13): HTTPS, plain HTTP on loopback,
 * plain HTTP behind the site's TLS proxy, or no inbound port. Starts carry the SecretToken, so a
 * technician must see at a glance which of these the site chose. The config schema refuses plain
 * HTTP off loopback without start.behindTlsProxy, so that case never gets here.
 */
import { startEndpointTransport } from '../../config/schema.js';
import type { Check } from '../types.js';

export const startEndpointCheck: Check = {
  id: 'start-endpoint',
  title: 'Start endpoint',
  needsConfig: true,
  async run(_ctx, config) {
    const { listen, certFile, behindTlsProxy } = config.start;
    const transport = startEndpointTransport(config.start);
    const details = { transport, listen, certFile, behindTlsProxy };
    switch (transport) {
      case 'none':
        return {
          status: 'OK',
          summary: 'no inbound port (start.listen is null): Starts come through the relay only',
          details,
        };
      case 'https':
        return { status: 'OK', summary: `HTTPS (start.certFile) on ${listen}`, details };
      case 'loopback':
        return { status: 'OK', summary: `plain HTTP on loopback (${listen})`, details };
      case 'tls-proxy':
        return {
          status: 'OK',
          summary: `plain HTTP on ${listen} behind the site's TLS proxy (start.behindTlsProxy)`,
          details,
        };
      case 'refused':
        return {
          status: 'FAIL',
          summary:
            `plain HTTP on ${listen}, off loopback, without start.certFile: ` +
            `Starts and their SecretToken would cross the network in clear text`,
          action:
            'set start.certFile and start.keyFile, or start.behindTlsProxy: true in the ' +
            'site file when a TLS proxy terminates HTTPS in front of the machine',
          details,
        };
    }
  },
};
