/**
 * The physical floor under the static Start overhead (docs/decisions/targets.md): a Start is answered and
 * its `C,START` written only after two ledger commits, each fsynced before the effect it precedes.
 * What those two syncs cost depends on the disk, not on qrvend, so the figure is judged beyond them.
 *
 * The floor is the same kind of commit, measured on the same disk in the same run: a SQLite file
 * beside the daemon's ledger, opened with the ledger's own pragmas (applyDurabilityPragmas: WAL,
 * synchronous=FULL, 512-byte pages), one IMMEDIATE transaction per commit writing a row keyed by a
 * random id and an event row (about the frames a Start's commits append; counted in `framesPerCommit`).
 * A pair of such commits is one Start's floor; the bench takes a pair between each two Starts, so
 * both see the disk in the same state. Synchronous: the caller runs it when nothing is being timed.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { applyDurabilityPragmas, LEDGER_PAGE_SIZE } from '../../src/ledger/db.js';

/** A WAL frame: its 24-byte header and one page. */
const FRAME_BYTES = 24 + LEDGER_PAGE_SIZE;

export class FsyncFloor {
  private frames = 0;
  private commits = 0;

  private constructor(
    private readonly db: Database.Database,
    private readonly walPath: string,
    private readonly open: Database.Statement<[string, Buffer]>,
    private readonly advance: Database.Statement<[string]>,
    private readonly event: Database.Statement<[string, Buffer]>,
  ) {}

  /** `fsync-floor.sqlite` in `dir` (the daemon's scratch directory: the same file system as its ledger). */
  static open(dir: string): FsyncFloor {
    const path = join(dir, 'fsync-floor.sqlite');
    const db = new Database(path);
    applyDurabilityPragmas(db);
    db.exec(
      'CREATE TABLE IF NOT EXISTS tx (id TEXT PRIMARY KEY, state INTEGER NOT NULL, body BLOB NOT NULL); ' +
        'CREATE TABLE IF NOT EXISTS ev (id INTEGER PRIMARY KEY, tx TEXT NOT NULL, body BLOB NOT NULL)',
    );
    return new FsyncFloor(
      db,
      `${path}-wal`,
      db.prepare('INSERT INTO tx (id, state, body) VALUES (?, 1, ?)'),
      db.prepare('UPDATE tx SET state = state + 1 WHERE id = ?'),
      db.prepare('INSERT INTO ev (tx, body) VALUES (?, ?)'),
    );
  }

  /**
   * Two commits, as a Start makes them (a new row with its event; the row moved on with another
   * event), each timed on its own; returns their sum in ms.
   */
  pair(): number {
    const id = randomBytes(16).toString('hex');
    const first = this.commit(() => {
      this.open.run(id, randomBytes(120));
      this.event.run(id, randomBytes(150));
    });
    const second = this.commit(() => {
      this.advance.run(id);
      this.event.run(id, randomBytes(150));
    });
    return first + second;
  }

  /** WAL frames each commit appended on average (growth of the -wal file; a checkpoint's restart is skipped). */
  get framesPerCommit(): number {
    return this.commits > 0 ? this.frames / this.commits : Number.NaN;
  }

  close(): void {
    this.db.close();
  }

  private commit(write: () => void): number {
    const before = walBytes(this.walPath);
    const t0 = performance.now();
    this.db.transaction(write).immediate();
    const ms = performance.now() - t0;
    const grown = walBytes(this.walPath) - before;
    if (grown > 0) {
      this.frames += grown / FRAME_BYTES;
      this.commits += 1;
    }
    return ms;
  }
}

function walBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
