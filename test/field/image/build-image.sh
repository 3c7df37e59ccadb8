#!/usr/bin/env bash
# Builds the field test's emulated Pi: a Debian bookworm root filesystem (mmdebstrap, package
# scripts run under qemu-user), a Debian kernel and a tiny busybox initramfs made on the
# host (installing the kernel inside the emulated chroot costs 17-33 min of emulated mkinitramfs),
# and a raw ext4 disk image made with `mkfs.ext4 -d` (no loop mount, no privileges beyond root).
#
# Usage: build-image.sh OUTDIR   (OUTDIR must not exist; written atomically by the caller)
# Writes: OUTDIR/{disk.img,vmlinuz,initrd.img,id_ed25519,id_ed25519.pub,kernel-version}
# QRVEND_FIELD_ARCH: arm64 (default; Debian's arm64 kernel, qemu-system-aarch64) or armhf (32-bit:
# the armmp-lpae kernel for QEMU's virt board with a Cortex-A15, qemu-system-arm).
# QRVEND_FIELD_MIRROR: apt sources lines (one per line) instead of mmdebstrap's defaults, e.g.
# without the security suite when the mirror serves an inconsistent index of it (seen for armhf).
set -euo pipefail
arch=${QRVEND_FIELD_ARCH:-arm64}
case "$arch" in
  arm64) kernel_meta=linux-image-arm64; binfmt=qemu-aarch64 ;;
  armhf) kernel_meta=linux-image-armmp-lpae; binfmt=qemu-arm ;;
  *) echo "build-image.sh: QRVEND_FIELD_ARCH=$arch: use arm64 or armhf" >&2; exit 1 ;;
esac

out=${1:?usage: build-image.sh OUTDIR}
[ "$(id -u)" = 0 ] || { echo "build-image.sh: must run as root (mmdebstrap, mkfs.ext4 -d with owners)" >&2; exit 1; }
for tool in mmdebstrap mkfs.ext4 cpio depmod modprobe dpkg-deb ssh-keygen arch-test; do
  command -v "$tool" >/dev/null || { echo "build-image.sh: $tool is missing (see docs/field-test.md: host tools)" >&2; exit 1; }
done
arch-test "$arch" >/dev/null || { echo "build-image.sh: this host cannot run $arch binaries: mount binfmt_misc and enable $binfmt (docs/field-test.md)" >&2; exit 1; }

mkdir -p "$out"
work=$(mktemp -d "${out%/}.work.XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
debs=$work/debs
mkdir -p "$debs"

ssh-keygen -q -t ed25519 -N '' -C qrvend-field-test -f "$out/id_ed25519"

# Packages a stock Debian bookworm / Raspberry Pi OS Lite image has and the scenario needs.
include=systemd,systemd-sysv,udev,dbus,openssh-server,iproute2,ca-certificates,kmod,procps,adduser,libstdc++6,curl,less
# gpiod: libgpiod's tools (gpioinfo), the kernel's own view of the GPIO lines for the GPIO steps;
# a technician installs it on a board the same way (docs/devices.md).
include=$include,gpiod
# The armhf .deb depends on libatomic1 (its Node links it); a board's apt fetches it, the guest has
# no network, so the image carries it.
[ "$arch" = armhf ] && include=$include,libatomic1

# The hook downloads (does not install) the kernel and a static busybox with the chroot's own apt,
# so the host's dpkg needs no foreign architecture.
mmdebstrap --arch="$arch" --variant=minbase --include="$include" \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='force-unsafe-io' \
  --aptopt='Acquire::Languages "none"' \
  --customize-hook='chroot "$1" sh -c "cd /tmp && kpkg=\$(apt-cache depends '"$kernel_meta"' | sed -n \"s/.*Depends: \\(linux-image-[0-9].*\\)/\\1/p\" | head -n1) && apt-get download -q \$kpkg busybox-static"' \
  --customize-hook="mv \"\$1\"/tmp/*.deb $debs/" \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
  bookworm "$rootfs" ${QRVEND_FIELD_MIRROR:+"$QRVEND_FIELD_MIRROR"}

# --- kernel and modules, on the host ---
kx=$work/kernel
mkdir -p "$kx"
for d in "$debs"/linux-image-*.deb; do dpkg-deb -x "$d" "$kx"; done
kver=$(ls "$kx/lib/modules")
cp "$kx/boot/vmlinuz-$kver" "$out/vmlinuz"
echo "$kver" >"$out/kernel-version"
mkdir -p "$rootfs/lib/modules"
cp -a "$kx/lib/modules/$kver" "$rootfs/lib/modules/"
depmod -b "$rootfs" "$kver"

# --- initramfs: static busybox, the modules to reach an ext4 root on virtio, switch_root ---
bb=$work/busybox
dpkg-deb -x "$debs"/busybox-static_*.deb "$bb"
ird=$work/initrd
mkdir -p "$ird/bin" "$ird/dev" "$ird/proc" "$ird/sys" "$ird/newroot" "$ird/lib/modules"
cp "$bb/bin/busybox" "$ird/bin/busybox"
for m in ext4 virtio_blk virtio_pci virtio_mmio virtio_console crc32c_generic; do
  modprobe -d "$rootfs" -S "$kver" --show-depends "$m" 2>/dev/null | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' >"$work/modules.order"
: >"$ird/modules.order"
while read -r ko; do
  base=$(basename "$ko")
  case "$base" in
    *.ko.xz) xz -dc "$ko" >"$ird/lib/modules/${base%.xz}"; base=${base%.xz} ;;
    *) cp "$ko" "$ird/lib/modules/$base" ;;
  esac
  echo "$base" >>"$ird/modules.order"
done <"$work/modules.order"
cat >"$ird/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
while read -r m; do /bin/busybox insmod "/lib/modules/$m" 2>/dev/null; done </modules.order
i=0
while [ ! -b /dev/vda ] && [ $i -lt 300 ]; do /bin/busybox sleep 0.1; i=$((i+1)); done
/bin/busybox mount -t ext4 -o rw /dev/vda /newroot || { echo "initramfs: cannot mount /dev/vda"; exec /bin/busybox sh; }
/bin/busybox umount /proc /sys
/bin/busybox mount --move /dev /newroot/dev
exec /bin/busybox switch_root /newroot /sbin/init
INIT
chmod 0755 "$ird/init"
(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -9) >"$out/initrd.img"

# --- the guest's configuration ---
echo qrvend-pi >"$rootfs/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 qrvend-pi\n' >"$rootfs/etc/hosts"
echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$rootfs/etc/fstab"
mkdir -p "$rootfs/etc/systemd/network"
printf '[Match]\nName=en* eth*\n\n[Network]\nDHCP=ipv4\n' >"$rootfs/etc/systemd/network/10-wired.network"
printf 'nameserver 10.0.2.3\n' >"$rootfs/etc/resolv.conf"
install -d -m 0700 "$rootfs/root/.ssh"
install -m 0600 "$out/id_ed25519.pub" "$rootfs/root/.ssh/authorized_keys"
# A Pi names its PL011 /dev/serial0; the board config points there.
printf 'KERNEL=="ttyAMA0", SYMLINK+="serial0", GROUP="dialout", MODE="0660"\n' >"$rootfs/etc/udev/rules.d/99-serial0.rules"
# Faster ssh under emulation: no DNS lookups of the client.
printf 'UseDNS no\n' >"$rootfs/etc/ssh/sshd_config.d/field-test.conf"
systemctl --root="$rootfs" enable systemd-networkd.service ssh.service >/dev/null 2>&1
systemctl --root="$rootfs" set-default multi-user.target >/dev/null 2>&1
# The PL011 is the MDB board's line and fb0 is the consumer display: no getty or console on either.
systemctl --root="$rootfs" mask serial-getty@ttyAMA0.service getty@tty1.service >/dev/null 2>&1
# The guest has no internet: no apt timers, no man-db rebuilds.
systemctl --root="$rootfs" mask apt-daily.timer apt-daily-upgrade.timer >/dev/null 2>&1 || true

# --- the disk ---
truncate -s 3G "$out/disk.img"
mkfs.ext4 -q -F -L qrvend-root -d "$rootfs" "$out/disk.img"
