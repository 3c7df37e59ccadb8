/** `npm run release:check -- out/release/*.deb out/release/*.tar.gz`: exit 1 when any package has a problem. */
import { Command } from 'commander';
import { checkArtifact } from './check.js';

const program = new Command('release:check')
  .description('Inspect qrvend release packages: control fields, conffiles, contents, ELF architectures')
  .argument('<files...>', '.deb or .tar.gz files')
  .parse();

let failed = false;
for (const file of program.args) {
  try {
    const problems = await checkArtifact(file);
    if (problems.length === 0) process.stdout.write(`OK   ${file}\n`);
    else {
      failed = true;
      for (const p of problems) process.stdout.write(`FAIL ${file}: ${p}\n`);
    }
  } catch (err) {
    failed = true;
    process.stdout.write(`FAIL ${file}: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}
process.exitCode = failed ? 1 : 0;
