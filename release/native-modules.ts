/**
 * The release's production node_modules for one target: installed with npm for the target's
 * os/cpu/libc (so prebuilt optional platform packages resolve for the target, not this machine),
 * scripts off (nothing of this machine's is built, nothing is downloaded by install scripts),
 * then every package with a binding.gyp compiled by node-gyp for the target's CPU against the
 * bundled Node's headers (Debian's cross toolchain for arm64/armhf). The result is cached per
 * lockfile, target and Node version: a warm build copies it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { ReleaseTarget } from './targets.js';
import type { NodeRuntime } from './node-runtime.js';
import { run, secondsSince } from './run.js';

/** Bump when the way modules are built changes, so cached trees are not reused. */
const RECIPE = 'native-modules-v1';

export interface ModulesResult {
  dir: string;
  fromCache: boolean;
  compiled: string[];
}

export interface ModulesOptions {
  repo: string;
  cacheDir: string;
  target: ReleaseTarget;
  runtime: NodeRuntime;
  jobs: number;
  log: (line: string) => void;
}

export async function buildProductionModules(o: ModulesOptions): Promise<ModulesResult> {
  const lock = readFileSync(join(o.repo, 'package-lock.json'));
  const manifest = releaseManifest(o.repo);
  const key = createHash('sha256')
    .update(RECIPE)
    .update(lock)
    .update(manifest)
    .update(`${o.target.deb}:${o.runtime.version}`)
    .digest('hex')
    .slice(0, 16);
  const dir = join(o.cacheDir, 'modules', `${o.target.deb}-${key}`);
  if (existsSync(join(dir, 'node_modules', '.qrvend-release-complete'))) {
    o.log(`modules: ${o.target.deb} from the cache (${relative(o.cacheDir, dir)})`);
    return { dir: join(dir, 'node_modules'), fromCache: true, compiled: readCompiled(dir) };
  }
  const work = `${dir}.partial-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    writeFileSync(join(work, 'package.json'), manifest);
    writeFileSync(join(work, 'package-lock.json'), lock);
    const t0 = process.hrtime.bigint();
    await run(
      'npm',
      [
        'ci',
        '--omit=dev',
        '--ignore-scripts',
        '--os=linux',
        `--cpu=${o.target.npmCpu}`,
        '--libc=glibc',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
      ],
      {
        cwd: work,
        timeoutMs: 900_000,
      },
    );
    o.log(`modules: npm ci for linux/${o.target.npmCpu} in ${secondsSince(t0)} s`);

    const gyp = await nodeGypPath();
    const compiled: string[] = [];
    for (const pkg of findNativePackages(join(work, 'node_modules'))) {
      const t1 = process.hrtime.bigint();
      await run(
        process.execPath,
        [gyp, 'rebuild', '--release', `--arch=${o.target.gypArch}`, `--nodedir=${o.runtime.dir}`, `--jobs=${o.jobs}`],
        {
          cwd: pkg,
          env: compilerEnv(o.target),
          timeoutMs: 1_800_000,
        },
      );
      const name = relative(join(work, 'node_modules'), pkg);
      compiled.push(name);
      pruneNativePackage(pkg);
      o.log(`modules: compiled ${name} for ${o.target.deb} in ${secondsSince(t1)} s`);
    }
    writeFileSync(join(work, 'compiled.json'), JSON.stringify(compiled));
    writeFileSync(join(work, 'node_modules', '.qrvend-release-complete'), `${new Date().toISOString()}\n`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(o.cacheDir, 'modules'), { recursive: true });
    renameSync(work, dir);
    return { dir: join(dir, 'node_modules'), fromCache: false, compiled };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * package.json without scripts (npm ci needs the devDependencies listed to match the lockfile; --omit=dev skips them).
 */
function releaseManifest(repo: string): string {
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as Record<string, unknown>;
  delete pkg.scripts;
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

function readCompiled(dir: string): string[] {
  try {
    return JSON.parse(readFileSync(join(dir, 'compiled.json'), 'utf8')) as string[];
  } catch {
    return [];
  }
}

/** Packages (also nested and scoped) whose top directory has a binding.gyp. */
export function findNativePackages(nodeModules: string): string[] {
  const found: string[] = [];
  const visit = (modulesDir: string) => {
    if (!existsSync(modulesDir)) return;
    for (const entry of readdirSync(modulesDir)) {
      if (entry.startsWith('.')) continue;
      const path = join(modulesDir, entry);
      if (!statSync(path).isDirectory()) continue;
      if (entry.startsWith('@')) {
        visit(path);
        continue;
      }
      if (existsSync(join(path, 'binding.gyp'))) found.push(path);
      visit(join(path, 'node_modules'));
    }
  };
  visit(nodeModules);
  return found.sort();
}

/** Keep the compiled addon, drop the build's objects and any prebuilt binaries for other platforms. */
function pruneNativePackage(pkg: string): void {
  rmSync(join(pkg, 'prebuilds'), { recursive: true, force: true });
  const release = join(pkg, 'build', 'Release');
  for (const entry of readdirSync(release)) {
    const keep = entry.endsWith('.node') && entry !== 'test_extension.node';
    if (!keep) rmSync(join(release, entry), { recursive: true, force: true });
  }
  for (const entry of readdirSync(join(pkg, 'build'))) {
    if (entry !== 'Release') rmSync(join(pkg, 'build', entry), { recursive: true, force: true });
  }
}

function compilerEnv(target: ReleaseTarget): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CC_host: 'gcc', CXX_host: 'g++' };
  // ~/.npmrc may point node-gyp at this machine's headers; the target's come from --nodedir.
  delete env.npm_config_nodedir;
  if (target.toolchainPrefix !== null) {
    const p = target.toolchainPrefix;
    Object.assign(env, {
      CC: `${p}-gcc`,
      CXX: `${p}-g++`,
      LINK: `${p}-g++`,
      AR: `${p}-ar`,
      RANLIB: `${p}-ranlib`,
      STRIP: `${p}-strip`,
    });
  }
  return env;
}

let gypPath: string | undefined;
/** npm's own node-gyp (every npm carries one), so the build needs no extra package. */
async function nodeGypPath(): Promise<string> {
  if (gypPath !== undefined) return gypPath;
  const root = (await run('npm', ['root', '-g'], { capture: true })).trim();
  const candidate = join(root, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (!existsSync(candidate))
    throw new Error(`node-gyp not found at ${candidate}: npm's bundled node-gyp is needed to compile native modules`);
  gypPath = candidate;
  return candidate;
}
