/**
 * The two emulated Pis of the field test: arm64 (a 64-bit Raspberry Pi OS / Debian, the first
 * choice) and armhf (a 32-bit image, as many Pi Zero 2 W and Pi 3 controllers run; docs/decisions/smallest-boards.md
 * item
 * 2). QRVEND_FIELD_ARCH picks one (default arm64). The image recipe takes the same variable
 * (test/field/image/build-image.sh), and each architecture has its own cached image.
 */
export interface FieldArch {
  /** Debian architecture: the .deb's and the image's. */
  deb: 'arm64' | 'armhf';
  /** The system emulator and its machine: QEMU's virt board with a CPU of that generation. */
  qemu: string;
  machine: string[];
  /** `uname -m` in the guest. */
  uname: string;
}

export const FIELD_ARCHES: Record<FieldArch['deb'], FieldArch> = {
  arm64: { deb: 'arm64', qemu: 'qemu-system-aarch64', machine: ['-M', 'virt', '-cpu', 'cortex-a72'], uname: 'aarch64' },
  // Cortex-A15 (ARMv7 with LPAE) for Debian's armmp-lpae kernel; highmem=off keeps the PCI window
  // below 4 GB, where a 32-bit kernel without LPAE mappings of it can reach the virtio devices.
  armhf: {
    deb: 'armhf',
    qemu: 'qemu-system-arm',
    machine: ['-M', 'virt,highmem=off', '-cpu', 'cortex-a15'],
    uname: 'armv7l',
  },
};

export function fieldArch(env: NodeJS.ProcessEnv = process.env): FieldArch {
  const name = env.QRVEND_FIELD_ARCH ?? 'arm64';
  if (name !== 'arm64' && name !== 'armhf') throw new Error(`QRVEND_FIELD_ARCH=${name}: use arm64 or armhf`);
  return FIELD_ARCHES[name];
}
