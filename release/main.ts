/**
 * `npm run release -- --arch arm64|armhf|amd64|all [--out DIR]`: the release for each target,
 * built on this x86_64 machine, then checked. The TypeScript was compiled once by the npm
 * script before this runs (dist is the same JavaScript for every architecture).
 *
 * Output (stable; the field test relies on it): <out>/qrvend_<version>_<arch>.deb and
 * <out>/qrvend_<version>_<arch>.tar.gz, default <out> = out/release. The paths of the
 * files made are printed on stdout, one a line; progress and timings go to stderr.
 *
 * With `--sign KEY --key-id ID [--expires-days N] [--min-version V]`, each tarball also gets a
 * signed update manifest, <out>/qrvend_<version>_<arch>.manifest.json (release/sign.ts).
 */
import { Command, Option } from 'commander';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RELEASE_ARCHES, TARGETS, isReleaseArch, type ReleaseArch } from './targets.js';
import { fetchNodeRuntime } from './node-runtime.js';
import { buildProductionModules } from './native-modules.js';
import { buildDeb, buildTarball, readVersion, releaseDir, stageTree } from './package-tree.js';
import { checkArtifact } from './check.js';
import { smokeTest } from './smoke.js';
import { secondsSince } from './run.js';
import { signReleaseTarball } from './sign.js';
import { RELEASE_VERSION } from '../src/fleet/contract/manifest-schema.js';
import { MAX_DOCUMENT_LIFETIME_MS } from '../src/trust/signed.js';
import { KEY_ID, loadPrivateKey } from '../src/trust/keys.js';
import { missingTools, missingToolsMessage } from './build-tools.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

interface Options {
  arch: string[];
  out: string;
  cache: string;
  jobs: string;
  compress: 'xz' | 'gzip';
  sign?: string;
  keyId?: string;
  expiresDays: string;
  minVersion?: string;
}

function parseArches(values: string[]): ReleaseArch[] {
  const arches = new Set<ReleaseArch>();
  for (const value of values.flatMap((v) => v.split(','))) {
    if (value === 'all') RELEASE_ARCHES.forEach((a) => arches.add(a));
    else if (isReleaseArch(value)) arches.add(value);
    else throw new Error(`unknown --arch '${value}': use ${RELEASE_ARCHES.join(', ')} or all`);
  }
  return [...arches];
}

async function main(): Promise<void> {
  const program = new Command('release')
    .description('Build the qrvend .deb and tarball for target architectures on this machine')
    .requiredOption(
      '--arch <arch...>',
      `target architectures: ${RELEASE_ARCHES.join(', ')}, all (repeat or comma-separate)`,
    )
    .option('--out <dir>', 'where the packages go', join(REPO, 'out/release'))
    .option(
      '--cache <dir>',
      'downloaded Node packages and built node_modules',
      process.env.QRVEND_RELEASE_CACHE ?? join(homedir(), '.cache/qrvend-release'),
    )
    .option('--jobs <n>', 'parallel compiler jobs', '2')
    .addOption(new Option('--compress <kind>', 'package compression').choices(['gzip', 'xz']).default('gzip'))
    .option(
      '--sign <key>',
      'sign an update manifest for each tarball with this private key (PEM, `qrvend fleet keygen --scopes update`)',
    )
    .option('--key-id <id>', "the id of that key in the machines' trust file (with --sign)")
    .option('--expires-days <n>', 'how long the signed manifest may be offered, in days', '90')
    .option(
      '--min-version <v>',
      'the oldest installed version the update applies to (default: <major>.0.0 of this release)',
    )
    .parse();
  const opts = program.opts<Options>();
  const arches = parseArches(opts.arch);
  const jobs = Number(opts.jobs);
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 64)
    throw new Error(`--jobs '${opts.jobs}' is not a whole number from 1 to 64`);
  const maxDays = MAX_DOCUMENT_LIFETIME_MS / 86_400_000;
  const expiresDays = Number(opts.expiresDays);
  if (opts.sign !== undefined) {
    if (opts.keyId === undefined || !KEY_ID.test(opts.keyId))
      throw new Error("--sign needs --key-id, the key's id in the trust file (letters, digits and . _ : -)");
    if (!Number.isInteger(expiresDays) || expiresDays < 1 || expiresDays > maxDays)
      throw new Error(`--expires-days '${opts.expiresDays}' is not a whole number from 1 to ${maxDays}`);
    if (opts.minVersion !== undefined && !RELEASE_VERSION.test(opts.minVersion))
      throw new Error(`--min-version '${opts.minVersion}' is not MAJOR.MINOR.PATCH`);
    loadPrivateKey(opts.sign); // an unreadable key is said now, not after the build
  }
  if (!existsSync(join(REPO, 'dist/src/cli/main.js')))
    throw new Error(`no build in ${REPO}dist: run 'npm run release' (it compiles first)`);
  // Before any download or compile: a missing compiler is named with its apt package, not found by node-gyp.
  const missing = missingTools(
    arches.map((a) => TARGETS[a]),
    process.env.PATH,
  );
  if (missing.length > 0) throw new Error(missingToolsMessage(missing));

  const out = resolve(opts.out);
  const cache = resolve(opts.cache);
  mkdirSync(out, { recursive: true });
  mkdirSync(cache, { recursive: true });
  const version = readVersion(REPO);
  const log = (line: string) => process.stderr.write(`release: ${line}\n`);
  const made: string[] = [];
  let failed = false;

  for (const arch of arches) {
    const target = TARGETS[arch];
    const t0 = process.hrtime.bigint();
    const runtime = await fetchNodeRuntime(target, cache, log);
    const modules = await buildProductionModules({ repo: REPO, cacheDir: cache, target, runtime, jobs, log });
    const root = join(out, `.stage-${arch}`);
    const stage = { repo: REPO, root, target, runtime, modulesDir: modules.dir, version };
    try {
      const t1 = process.hrtime.bigint();
      await stageTree(stage);
      log(`${arch}: native modules load: ${await smokeTest(join(root, releaseDir(version)), target)}`);
      const tgz = await buildTarball(stage, out);
      const deb = await buildDeb(stage, out, opts.compress);
      log(`${arch}: packed in ${secondsSince(t1)} s`);
      for (const file of [deb, tgz]) {
        const problems = await checkArtifact(file);
        if (problems.length > 0) {
          failed = true;
          for (const p of problems) log(`${arch}: CHECK FAILED ${file}: ${p}`);
        }
        made.push(file);
      }
      if (opts.sign !== undefined) {
        const signed = signReleaseTarball(tgz, version, arch, {
          keyFile: opts.sign,
          keyId: opts.keyId!,
          expiresDays,
          minVersion: opts.minVersion ?? null,
          nowMs: Date.now(),
        });
        log(`${arch}: update manifest signed by ${opts.keyId}, valid ${expiresDays} days`);
        made.push(signed.artifact, signed.manifest);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
    log(
      `${arch}: done in ${secondsSince(t0)} s (modules ` +
        `${modules.fromCache ? 'from the cache' : `compiled: ${modules.compiled.join(', ')}`})`,
    );
  }
  for (const file of made) process.stdout.write(`${file}\n`);
  if (failed) process.exitCode = 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`release: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
