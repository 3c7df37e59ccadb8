/**
 * Strict validation of every request the simulator receives, with the seed's rules from the
 * shared protocol module: a violation is answered Declined with 998, a missing mandatory member
 * with 997 (a Settlement without BasicInfo.Amount with 10, seed Errors 4), and a StatusMessage
 * naming the member.
 */
import type { z } from 'zod';
import type { GatewayOperation } from '../../gateway/outcome.js';
import {
  DeclineCodes,
  declinedStatus,
  memberPath,
  OPERATIONS,
  validateRequest,
  type RequestOf,
  type Status,
} from '../../gateway/protocol/index.js';

interface SchemaDef {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  in?: z.ZodType;
}

const defOf = (schema: z.ZodType): SchemaDef => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

/**
 * The first member of `value` that its schema does not define, as a path (`Products[0].Colour`),
 * or null. Objects the seed leaves open accept and drop unknown members; a strict gateway
 * refuses them, and so does the simulator (unless lenient), so a misspelt member is caught.
 */
export function undefinedMember(schema: z.ZodType, value: unknown, path: PropertyKey[] = []): string | null {
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
      return def.innerType ? undefinedMember(def.innerType, value, path) : null;
    case 'pipe':
      return def.in ? undefinedMember(def.in, value, path) : null;
    case 'array':
      if (!Array.isArray(value) || !def.element) return null;
      for (let i = 0; i < value.length; i++) {
        const found = undefinedMember(def.element, value[i], [...path, i]);
        if (found !== null) return found;
      }
      return null;
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
      const shape = (schema as unknown as { shape: Record<string, z.ZodType> }).shape;
      for (const [key, member] of Object.entries(value as Record<string, unknown>)) {
        const memberSchema = shape[key];
        if (memberSchema === undefined) return memberPath([...path, key]);
        const found = undefinedMember(memberSchema, member, [...path, key]);
        if (found !== null) return found;
      }
      return null;
    }
    default:
      return null;
  }
}

export type Checked<O extends GatewayOperation> =
  | { ok: true; value: RequestOf<O>; raw: Record<string, unknown> }
  | { ok: false; status: Status; member: string; message: string; transactionId: string | null };

function transactionIdOf(raw: unknown): string | null {
  const id = (raw as { BasicInfo?: { TransactionId?: unknown } } | null)?.BasicInfo?.TransactionId;
  return typeof id === 'string' ? id : null;
}

export interface CheckOptions {
  /** Accept (and drop) members the seed does not define, as the simulator did before (--lenient). */
  lenient?: boolean;
}

export function checkRequest<O extends GatewayOperation>(op: O, text: string, options: CheckOptions = {}): Checked<O> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    const message = 'the body is not JSON';
    return {
      ok: false,
      status: declinedStatus(DeclineCodes.ValidationError, message),
      member: '',
      message,
      transactionId: null,
    };
  }
  const result = validateRequest(op, raw);
  if (result.ok) {
    const unknown = options.lenient ? null : undefinedMember(OPERATIONS[op].request, raw);
    if (unknown !== null) {
      const message = `${unknown} is not a member the interface defines`;
      return {
        ok: false,
        status: declinedStatus(DeclineCodes.ValidationError, message),
        member: unknown,
        message,
        transactionId: transactionIdOf(raw),
      };
    }
    return { ok: true, value: result.value, raw: raw as Record<string, unknown> };
  }
  const amountMissing =
    op === 'Settlement' && result.code === DeclineCodes.MissingMandatory && result.member === 'BasicInfo.Amount';
  const code = amountMissing ? DeclineCodes.AmountMissing : result.code;
  const message = amountMissing ? 'amount missing: BasicInfo.Amount is missing' : result.message;
  return {
    ok: false,
    status: declinedStatus(code, message),
    member: result.member,
    message,
    transactionId: transactionIdOf(raw),
  };
}

/** Media types the seed accepts for request bodies. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || type === 'text/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}
