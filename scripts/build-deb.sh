#!/usr/bin/env bash
# Build the qrvend Debian package from the same tree scripts/install.sh makes.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/build-deb.sh [--out DIR] [--compress xz|gzip|none]

Builds qrvend_<version>_<arch>.deb into DIR (default: ./build) with dpkg-deb, from a tree made by
scripts/install.sh. Build it ON the target architecture (or in an emulated build of it): the
release carries compiled native modules (better-sqlite3, serialport, rpio) for this machine's
CPU and Node ABI. Run `npm ci` and `npx tsc -p .` first.

The package does not ship /etc/qrvend/config.json or the secret token: its postinst creates them
from the template when absent, so an upgrade never touches a technician's configuration.
USAGE
}

out=build
compress=xz
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    --compress) compress=${2:?--compress needs xz, gzip or none}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build-deb.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
done

case "$compress" in xz|gzip|none) ;; *) echo "build-deb.sh: --compress takes xz, gzip or none" >&2; exit 64 ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
command -v dpkg-deb >/dev/null 2>&1 || { echo "build-deb.sh: dpkg-deb is needed (apt-get install dpkg)" >&2; exit 1; }
version=$(node -p 'require(process.argv[1]).version' "$src/package.json")
arch=$(dpkg --print-architecture)
node_major=$(node -p 'process.versions.node.split(".")[0]')

pkg=$(mktemp -d)
trap 'rm -rf "$pkg"' EXIT
chmod 0755 "$pkg"
"$src/scripts/install.sh" --root "$pkg" --no-enable >/dev/null
# Technician-owned state is created by postinst, never shipped.
rm -rf "${pkg:?}/etc/qrvend" "${pkg:?}/var" "${pkg:?}/etc/systemd"
rmdir "$pkg/etc" 2>/dev/null || true

mkdir -p "$pkg/DEBIAN"
installed_kb=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
cat >"$pkg/DEBIAN/control" <<CONTROL
Package: qrvend
Version: $version
Architecture: $arch
Maintainer: qrvend maintainers <qrvend@localhost>
Section: misc
Priority: optional
Installed-Size: $installed_kb
Depends: nodejs (>= $node_major), systemd
Description: QR-payment agent for vending machines
 An MDB cashless reader (through an MDB adapter board) that takes Static QR and
 Dynamic QR payments and settles every sale with the payment gateway, offline-safe.
 Runs as the qrvend systemd service; technician tools: qrvend doctor, qrvend-logs,
 qrvend-serial-trace, qrvend-test-vend.
CONTROL
for s in postinst prerm postrm; do install -m 0755 "$src/packaging/debian/$s" "$pkg/DEBIAN/$s"; done

mkdir -p "$out"
deb="$out/qrvend_${version}_${arch}.deb"
dpkg-deb --root-owner-group "-Z$compress" --build "$pkg" "$deb" >/dev/null
echo "$deb"
