#!/usr/bin/env bash
# Prints the directory of a ready field-test image, building it first when the cache has none for
# the current recipe. The cache key is the SHA-256 of the recipe (build-image.sh): change the
# recipe and the next run builds a new image; old ones are removed once the new one is ready.
#
# Cache root: $QRVEND_FIELD_CACHE, default /var/cache/qrvend-field-test (outside the checkout, so a
# fresh clone on the same machine finds it warm). QRVEND_FIELD_ARCH (arm64, default, or armhf)
# picks the image: arm64 in image-<key>, armhf in image-armhf-<key>; each keeps its own.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${QRVEND_FIELD_CACHE:-/var/cache/qrvend-field-test}
arch=${QRVEND_FIELD_ARCH:-arm64}
key=$(sha256sum "$here/build-image.sh" | cut -c1-16)
case "$arch" in
  arm64) prefix=image- ;;
  armhf) prefix=image-armhf- ;;
  *) echo "ensure-image.sh: QRVEND_FIELD_ARCH=$arch: use arm64 or armhf" >&2; exit 1 ;;
esac
dir=$cache/$prefix$key
case "${1:-}" in
  --path) echo "$dir"; exit 0 ;;
  --check) [ -f "$dir/READY" ] && exit 0 || exit 1 ;;
esac
if [ -f "$dir/READY" ]; then echo "$dir"; exit 0; fi
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock -w 3600 9 || { echo "ensure-image.sh: another build holds $cache/.lock" >&2; exit 1; }
if [ ! -f "$dir/READY" ]; then
  rm -rf "$dir.tmp"
  start=$(date +%s)
  "$here/build-image.sh" "$dir.tmp" >&2
  echo "$(( $(date +%s) - start ))" >"$dir.tmp/build-seconds"
  touch "$dir.tmp/READY"
  rm -rf "$dir"
  mv "$dir.tmp" "$dir"
  # Older images of this architecture only (arm64's names are image-<hex>, armhf's image-armhf-<hex>).
  for old in "$cache/$prefix"*; do
    [ "$old" = "$dir" ] && continue
    [ "$arch" = arm64 ] && case "$old" in "$cache"/image-armhf-*) continue ;; esac
    rm -rf "$old"
  done
fi
echo "$dir"
