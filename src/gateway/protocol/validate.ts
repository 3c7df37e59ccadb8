/**
 * One validator for every message: runs a schema and reports the first problem the way the
 * gateway does, as a decline code (997 = a mandatory member is missing, 998 = any other
 * violation), the member path (`BasicInfo.Amount`, `Products[0].Price`) and a message that names
 * the member. Used by the Start endpoint, the gateway client (responses are untrusted) and the
 * simulator.
 */
import type { z } from 'zod';
import { DeclineCodes } from './codes.js';

export interface ValidationProblem {
  ok: false;
  code: typeof DeclineCodes.MissingMandatory | typeof DeclineCodes.ValidationError;
  /** Path of the offending member; '' means the body itself. */
  member: string;
  message: string;
}

export type ValidationResult<T> = { ok: true; value: T } | ValidationProblem;

/** `['Products', 0, 'Price']` -> `Products[0].Price`. */
export function memberPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cur: unknown = root;
  for (const part of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[part];
  }
  return cur;
}

/**
 * Validates `body` against `schema`. The returned value is zod's output (unknown members of open
 * objects dropped); callers that must echo exactly what they received keep `body` itself.
 */
export function validateWith<S extends z.ZodType>(schema: S, body: unknown): ValidationResult<z.output<S>> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  if (issue === undefined)
    return { ok: false, code: DeclineCodes.ValidationError, member: '', message: 'invalid body' };

  if (issue.code === 'unrecognized_keys') {
    const member = memberPath([...issue.path, issue.keys[0] ?? '']);
    return { ok: false, code: DeclineCodes.ValidationError, member, message: `${member} is not an allowed member` };
  }
  const member = memberPath(issue.path);
  const label = member === '' ? 'body' : member;
  const declaredMissing =
    issue.code === 'custom' && (issue.params as { missing?: boolean } | undefined)?.missing === true;
  const absent = issue.code !== 'custom' && valueAt(body, issue.path) == null;
  if (declaredMissing || absent) {
    const why = issue.code === 'custom' ? ` (${issue.message})` : '';
    return { ok: false, code: DeclineCodes.MissingMandatory, member, message: `${label} is missing${why}` };
  }
  return { ok: false, code: DeclineCodes.ValidationError, member, message: `${label}: ${issue.message}` };
}
