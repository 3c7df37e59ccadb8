/**
 * Site configuration files for the config tests: one scratch directory per test file, removed
 * when its tests are done; each call writes a new file (JSON of `content`, or the text as given).
 */
import { after } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function siteFiles(prefix: string): { siteFile(content: unknown): string; scratch: string } {
  const scratch = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(scratch, { recursive: true, force: true }));
  let files = 0;
  return {
    scratch,
    siteFile(content: unknown): string {
      const file = join(scratch, `site-${(files += 1)}.json`);
      writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
      return file;
    },
  };
}
