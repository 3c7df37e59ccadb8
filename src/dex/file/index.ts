/**
 * One audit file in, one answer out: the check (check.ts) and the parsed audit (parse.ts). A file
 * that cannot be read as an audit still comes back, with `audit: null` and the reason: the caller
 * keeps the raw bytes (docs/decisions/machine-audit.md: never dropped).
 */
import { readEnvelope } from './blocks.js';
import { checkFile, type FileCheck } from './check.js';
import { splitSegments } from './lines.js';
import { parseSegments } from './parse.js';
import type { ParsedAudit } from './audit-types.js';

export type { FileCheck, CheckIssue, G85Result } from './check.js';
export type * from './audit-types.js';

export interface AuditFile {
  check: FileCheck;
  /** null when there is no DXS block to read. */
  audit: ParsedAudit | null;
  /** Why the figures are not to be used (the first error), or null when the check passed. */
  reason: string | null;
  /**
   * Lines before DXS (vendor headers, and a capture tool's header skipped on the DXS line itself) and
   * the number of further DXS blocks, kept for the record.
   */
  preamble: string[];
  extraBlocks: number;
}

export function examineAuditFile(bytes: Uint8Array): AuditFile {
  const env = readEnvelope(splitSegments(bytes));
  const check = checkFile(bytes, env);
  // Several blocks: a reader may have put another device's audit first; the machine's is the one with VA1.
  const block = env.blocks.find((b) => b.sets.some((s) => s.body.some((seg) => seg.tag === 'VA1'))) ?? env.blocks[0];
  const audit =
    block === undefined
      ? null
      : parseSegments(
          [...block.loose, ...block.sets.flatMap((s) => s.body)].sort((a, b) => a.line - b.line),
          block,
        );
  const firstError = check.issues.find((i) => i.severity === 'error');
  return {
    check,
    audit,
    reason: firstError ? firstError.message : null,
    preamble: env.preamble.map((s) => s.text),
    extraBlocks: Math.max(0, env.blocks.length - 1),
  };
}
