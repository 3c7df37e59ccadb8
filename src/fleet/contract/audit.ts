/**
 * The machine's own audit (EVA-DTS, docs/decisions/machine-audit.md, docs/dex.md) over the fleet link: the
 * `dex.read` command and the `audit` events. A raw audit file is published in parts so that each
 * message stays within MAX_PAYLOAD_BYTES (messages.ts); the parsed summary rides on part 0.
 */
import { z } from 'zod';

/** `cmd/dex.read` (scope `operate`): read the VMC's audit now (one read at a time: BUSY otherwise). */
export const DexReadArgs = z.strictObject({});
export type DexReadArgs = z.infer<typeof DexReadArgs>;

/**
 * Bytes of raw audit text per event part (base64 grows it by 4/3; the
 * rest of the event fits in what is left of 64 KiB).
 */
export const AUDIT_PART_BYTES = 32 * 1024;

export const AuditEvent = z.object({
  kind: z.literal('audit'),
  eventId: z.string().min(1).max(128),
  at: z.string().max(40),
  machineId: z.string().min(1).max(128),
  /** The ledger's id of this audit read; every part of one read carries the same. */
  auditId: z.string().min(1).max(64),
  part: z.number().int().min(0),
  parts: z.number().int().min(1).max(4096),
  /** This part of the raw file, base64 (the file as the VMC sent it, byte for byte). */
  raw: z.string().max(Math.ceil(AUDIT_PART_BYTES / 3) * 4),
  /** On part 0 only: how it was read and what it says (src/dex); null on the other parts. */
  summary: z.record(z.string(), z.unknown()).nullable(),
});
export type AuditEvent = z.infer<typeof AuditEvent>;
