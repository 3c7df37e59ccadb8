/**
 * What a power cut left on the guest's disk (docs/decisions/power-cuts.md), read between the cut and the next boot,
 * before the guest's own start-up touches anything: the overlay is converted to a raw image, its
 * ext4 journal replayed (what the guest's kernel would do at mount), and the agent's files are
 * dumped with debugfs (no mount, no root filesystem of the host involved). The ledger is judged
 * with the agent's own code, as the daemon will judge it at the next start.
 *
 * The SecretToken is compared by its SHA-256 in memory and its dump removed at once: it never
 * reaches a file of the run or the console.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ledgerLossOf, readMarker, tornMarkerOf } from '../../src/ledger/identity.js';
import { readAgentTransactions } from '../../rigs/chaos/agent-ledger.js';
import { run } from './proc.js';

const LEDGER = '/var/lib/qrvend/ledger.sqlite';

export interface LeftOnDisk {
  /** Guest path -> `missing`, `N bytes`, or for /etc/qrvend files `whole`/`empty`/`differs (N bytes)`. */
  files: Record<string, string>;
  /** The identity marker as the agent reads it: `qrvend-ledger N`, `torn: ...`, `none`. */
  marker: string;
  /** What the daemon will conclude at the next start. */
  verdict: string;
  /** The ledger's transactions (id, state, sold in minor units). */
  transactions: string[];
  /** Every outbox row: operation, transaction, status, attempts. */
  outbox: string[];
  /**
   * Guest path -> its text (up to 300 characters) or `missing`: files that hold no secret (the fleet's overlay and its
   * trial markers).
   */
  shown: Record<string, string>;
}

/**
 * `expected`: guest path -> the content the technician wrote (only compared, never stored).
 * `show`: guest paths of files that hold no secret, recorded as they are.
 */
export async function whatTheCutLeft(
  overlay: string,
  workDir: string,
  expected: Record<string, string> = {},
  show: readonly string[] = [],
): Promise<LeftOnDisk> {
  mkdirSync(workDir, { recursive: true });
  const raw = join(workDir, 'disk.raw');
  try {
    await run('qemu-img', ['convert', '-O', 'raw', overlay, raw], { timeoutMs: 120_000 });
    // Replays the journal only (exit 1 when it did): the state the next mount sees.
    const fsck = await run('e2fsck', ['-fy', '-E', 'journal_only', raw], { timeoutMs: 120_000, allowFail: true });
    if (fsck.code !== null && fsck.code > 1)
      throw new Error(`e2fsck journal replay of the cut disk: exit ${fsck.code}\n${fsck.stdout}${fsck.stderr}`);
    const dump = async (guestPath: string, to: string): Promise<boolean> => {
      rmSync(to, { force: true });
      await run('debugfs', ['-R', `dump ${guestPath} ${to}`, raw], { timeoutMs: 60_000, allowFail: true });
      return existsSync(to);
    };

    const files: Record<string, string> = {};
    const ledgerDir = join(workDir, 'ledger');
    mkdirSync(ledgerDir, { recursive: true });
    const copy = join(ledgerDir, 'ledger.sqlite');
    for (const suffix of ['', '-wal', '.identity']) {
      // -shm is left behind: SQLite rebuilds it from the WAL, as the daemon's open does.
      const there = await dump(LEDGER + suffix, copy + suffix);
      files[LEDGER + suffix] = there ? `${statSync(copy + suffix).size} bytes` : 'missing';
    }
    for (const [guestPath, content] of Object.entries(expected)) {
      const to = join(workDir, 'etc-file');
      if (!(await dump(guestPath, to))) {
        files[guestPath] = 'missing';
        continue;
      }
      const bytes = readFileSync(to);
      rmSync(to, { force: true });
      files[guestPath] =
        bytes.length === 0
          ? 'empty'
          : sha256(bytes) === sha256(Buffer.from(content))
            ? 'whole'
            : `differs (${bytes.length} bytes)`;
    }

    const shown: Record<string, string> = {};
    for (const guestPath of show) {
      const to = join(workDir, guestPath.slice(guestPath.lastIndexOf('/') + 1));
      shown[guestPath] = (await dump(guestPath, to))
        ? readFileSync(to, 'utf8').trim().slice(0, 300) || '(empty)'
        : 'missing';
    }

    const m = readMarker(copy);
    const marker = m.kind === 'id' ? `qrvend-ledger ${m.id}` : m.kind === 'torn' ? `torn: ${m.why}` : 'none';
    const transactions: string[] = [];
    const outbox: string[] = [];
    let verdict: string;
    if (!existsSync(copy)) {
      verdict = m.kind === 'none' ? 'no ledger yet: the next start creates one' : `lost: ${ledgerLossOf(copy)}`;
    } else {
      // integrity first: its read-write open rebuilds the -shm the read-only look needs beside a WAL.
      const integrity = integrityOf(copy);
      const loss = ledgerLossOf(copy);
      if (loss !== null) verdict = `lost: ${loss}`;
      else if (integrity !== 'ok') verdict = `damaged (${integrity.slice(0, 120)}): moved aside at the next start`;
      else if (m.kind === 'torn')
        verdict =
          `torn marker (${tornMarkerOf(copy)}) beside a sound ledger: ` + 'rewritten from the ledger at the next start';
      else if (m.kind === 'none')
        verdict =
          statSync(copy).size === 0
            ? 'empty ledger, no marker: a first start again'
            : 'no marker: written from the ledger at the next start';
      else verdict = 'marker witnesses the ledger';
      if (integrity === 'ok' && statSync(copy).size > 0) {
        for (const t of readAgentTransactions(copy))
          transactions.push(`${t.txId} ${t.flow} ${t.state} sold ${t.recordedSoldMinor}`);
        outbox.push(...outboxRows(copy));
      }
    }
    return { files, marker, verdict, transactions, outbox, shown };
  } finally {
    rmSync(raw, { force: true });
  }
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function integrityOf(path: string): string {
  let db: Database.Database | null = null;
  try {
    db = new Database(path, { fileMustExist: true });
    const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    return rows.map((r) => r.integrity_check).join('; ');
  } catch (err) {
    return (err as Error).message;
  } finally {
    db?.close();
  }
}

function outboxRows(path: string): string[] {
  const db = new Database(path, { fileMustExist: true });
  try {
    const hasOutbox =
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox'").get() !== undefined;
    if (!hasOutbox) return [];
    const rows = db.prepare('SELECT op, tx_id AS txId, status, attempts FROM outbox ORDER BY id').all() as Array<{
      op: string;
      txId: string;
      status: string;
      attempts: number;
    }>;
    return rows.map((r) => `${r.op} ${r.txId} ${r.status} (${r.attempts} attempts)`);
  } finally {
    db.close();
  }
}
