/**
 * The release architecture this agent runs on, by its Debian name (release/targets.ts): what an
 * update manifest's `arch` must be for this machine. Reported in the fleet status so that
 * `qrvend fleet update` offers a release only to machines it fits.
 */
import type { UpdateArch } from '../updates/manifest-schema.js';

const BY_NODE_ARCH: Readonly<Record<string, UpdateArch>> = { arm64: 'arm64', arm: 'armhf', x64: 'amd64' };

/** undefined on an architecture qrvend builds no release for. */
export function releaseArch(nodeArch: string = process.arch): UpdateArch | undefined {
  return Object.hasOwn(BY_NODE_ARCH, nodeArch) ? BY_NODE_ARCH[nodeArch] : undefined;
}
