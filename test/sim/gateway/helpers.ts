/** Talking to a running gateway simulator with plain fetch, and building valid bodies for it. */
import { createRequestBuilders } from '../../../src/gateway/envelope.js';
import { OPERATIONS } from '../../../src/gateway/protocol/index.js';
import type { GatewayOperation } from '../../../src/gateway/outcome.js';
import { encodeRequest, memberText, RawJson } from '../../../src/gateway/wire/index.js';
import { DEVICE, FIXED_NOW, sampleConfig } from '../../gateway/helpers.js';

export const builders = createRequestBuilders(sampleConfig(), DEVICE, FIXED_NOW);
/** What a closing request repeats from its authorization. */
export const closes = { machineAuTime: '050326140709', ageLimit: null };

export interface Reply {
  status: number;
  text: string;
  /** Parsed answer (null when not JSON); loosely typed so assertions read like the wire. */
  json: any;
}

export async function post(
  url: string,
  op: GatewayOperation,
  body: unknown,
  contentType = 'application/json',
): Promise<Reply> {
  const text = typeof body === 'string' ? body : encodeRequest(body as object);
  const res = await fetch(`${url}${OPERATIONS[op].path}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: text,
  });
  const out = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(out);
  } catch {
    json = null;
  }
  return { status: res.status, text: out, json };
}

let seq = 0;
export const newTx = (prefix = 'sim') => `${prefix}-${process.pid}-${String(++seq).padStart(5, '0')}`;

/** The PaymentInfo of an answer, as the exact text the simulator sent. */
export function paymentInfoOf(reply: Reply): RawJson {
  const text = memberText(reply.text, 'PaymentInfo');
  if (text === null) throw new Error(`no PaymentInfo in ${reply.text}`);
  return new RawJson(text);
}

/** Authorizes `amount` and returns the PaymentInfo the simulator issued (its exact text). */
export async function authorize(url: string, txId: string, amount = 5): Promise<RawJson> {
  const r = await post(url, 'Authorization', builders.authorization({ txId, amount }));
  if (r.json?.Status?.Verdict !== 'Approved') throw new Error(`authorization not approved: ${r.text}`);
  return paymentInfoOf(r);
}
