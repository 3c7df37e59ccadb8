#!/usr/bin/env bash
# Decides whether this machine can run `npm run field-test` now; prints the reason either way.
# Exit 0: run it. Exit 1: skip it (the reason is printed; CI treats this as a skip, not a failure).
#
# QRVEND_FIELD_BUDGET_S: seconds CI can give the field test (default 1200). The remote-update
# steps (docs/decisions/remote-updates-rollout.md item 6) add about 400 s of downloads, restarts and boots to a run. A
# warm run (image
# cached) needs about WARM_S; a cold one adds the image build (COLD_BUILD_S). Both are measured on
# this machine type with the other core idle (docs/field-test.md); a busy second core doubles them.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
budget=${QRVEND_FIELD_BUDGET_S:-1200}
arch=${QRVEND_FIELD_ARCH:-arm64}
case "$arch" in
  # With the update steps and the memory step: 1,030 s measured before the memory step (09:10).
  arm64) WARM_S=1200; qemu_system=qemu-system-aarch64 ;;
  # CI runs armhf without the update steps (QRVEND_FIELD_UPDATES=0): 870 s on 2026-11-26 10:07
  # with the other core mostly idle (about 1,200 s with it half busy, 08:50).
  armhf) WARM_S=900; qemu_system=qemu-system-arm ;;
  *) echo "field-test: QRVEND_FIELD_ARCH=$arch: use arm64 or armhf" >&2; exit 1 ;;
esac
COLD_BUILD_S=600

skip() { echo "field-test ($arch): SKIPPED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (mmdebstrap, mkfs.ext4 -d with owners)"
for tool in "$qemu_system" setpriv qemu-img ssh zbarimg dpkg-deb openssl e2fsck debugfs; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed (apt-get install qemu-system-arm qemu-utils openssh-client zbar-tools openssl e2fsprogs)"
done
# The fleet broker of the config.set power cut (test/field/fleet-broker.ts).
[ -x "${QRVEND_MOSQUITTO_BIN:-/usr/sbin/mosquitto}" ] || skip "mosquitto is not installed (apt-get install mosquitto)"

load=$(cut -d' ' -f1 /proc/loadavg)
factor=1
# With the machine's other core busy, everything under TCG takes about twice as long.
awk -v l="$load" 'BEGIN { exit !(l >= 1.5) }' && factor=2
need=$((WARM_S * factor))
if "$here/image/ensure-image.sh" --check; then
  state="image cached at $("$here/image/ensure-image.sh" --path)"
else
  for tool in mmdebstrap arch-test mkfs.ext4 cpio depmod; do
    command -v "$tool" >/dev/null 2>&1 || skip "image not cached and $tool is missing (apt-get install mmdebstrap arch-test e2fsprogs cpio kmod)"
  done
  arch-test "$arch" >/dev/null 2>&1 || skip "image not cached and $arch binaries do not run: mount binfmt_misc and update-binfmts --enable qemu-$([ "$arch" = armhf ] && echo arm || echo aarch64)"
  need=$(((WARM_S + COLD_BUILD_S) * factor))
  state="image not cached: it is built first"
fi
[ "$need" -le "$budget" ] || skip "$state; needs about ${need} s (load ${load}), budget QRVEND_FIELD_BUDGET_S=${budget} s"
echo "field-test ($arch): running: $state; about ${need} s expected (load ${load}), budget ${budget} s"
exit 0
