/**
 * Node for the target: the registry's node-linux-* package, fetched with `npm pack` once into
 * the cache and unpacked there. The unpacked tree serves twice: its bin/node ships in the
 * release, its include/node is node-gyp's --nodedir for the native modules.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ReleaseTarget } from './targets.js';
import { run } from './run.js';

export interface NodeRuntime {
  /** Unpacked package: bin/node, include/node, LICENSE. */
  dir: string;
  version: string;
}

export async function fetchNodeRuntime(
  target: ReleaseTarget,
  cacheDir: string,
  log: (line: string) => void,
): Promise<NodeRuntime> {
  const spec = `${target.nodePackage}@${target.nodeVersion}`;
  const dir = join(cacheDir, 'node', `${target.nodePackage}-${target.nodeVersion}`);
  if (existsSync(join(dir, 'bin/node')) && existsSync(join(dir, 'include/node/node.h'))) {
    log(`node: ${spec} from the cache`);
    return { dir, version: target.nodeVersion };
  }
  const packs = join(cacheDir, 'packs');
  mkdirSync(packs, { recursive: true });
  const tgz = join(packs, `${target.nodePackage}-${target.nodeVersion}.tgz`);
  if (!existsSync(tgz)) {
    log(`node: fetching ${spec} (npm pack)`);
    const partial = join(packs, `.partial-${process.pid}`);
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial);
    try {
      await run('npm', ['pack', spec, '--pack-destination', partial, '--silent'], { timeoutMs: 600_000 });
      renameSync(join(partial, `${target.nodePackage}-${target.nodeVersion}.tgz`), tgz);
    } finally {
      rmSync(partial, { recursive: true, force: true });
    }
  }
  const unpacking = `${dir}.partial-${process.pid}`;
  rmSync(unpacking, { recursive: true, force: true });
  mkdirSync(unpacking, { recursive: true });
  try {
    await run('tar', ['-xzf', tgz, '-C', unpacking, '--strip-components=1']);
    if (!existsSync(join(unpacking, 'bin/node'))) throw new Error(`${spec} has no bin/node: not a Node binary package`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(unpacking, dir);
  } finally {
    rmSync(unpacking, { recursive: true, force: true });
  }
  log(`node: ${spec} unpacked into ${dir}`);
  return { dir, version: target.nodeVersion };
}
