#!/usr/bin/env bash
# Install a built qrvend release into a root file system: this machine (/) or an image tree.
# Idempotent: run it again to upgrade; a technician's config and secret token are never touched.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/install.sh [--root DIR] [--no-enable] [--no-user]

Installs the built release from this checkout (run `npm ci` and `npx tsc -p .` first):
  /opt/qrvend/                 dist/src, config/, package.json, production node_modules only
  /opt/qrvend/bin/qrvend       the command (also /usr/bin/qrvend)
  /usr/bin/qrvend-*            technician scripts (logs, serial trace, test vend)
  /etc/qrvend/config.json      from a template, only if absent (edit it: CHANGE-ME values)
  /etc/qrvend/secret-token     empty placeholder, mode 0640 root:qrvend, only if absent
  /var/lib/qrvend/             state (ledger), owned by qrvend
  /usr/lib/systemd/system/qrvend.service, enabled for multi-user.target
  /usr/lib/sysusers.d/qrvend.conf, /usr/lib/tmpfiles.d/qrvend.conf,
  /usr/lib/udev/rules.d/60-qrvend-gpio.rules

Options:
  --root DIR    install into DIR instead of / (also: DESTDIR=DIR). Builds an image tree without
                touching the host: no user is created there; systemd-sysusers creates it at the
                image's first boot and systemd-tmpfiles then fixes the token file's group.
  --no-enable   do not enable the unit
  --no-user     do not create the qrvend user even when installing into /
  -h, --help    this help
EOF
}

root=${DESTDIR:-/}
enable=1
create_user=1
while [ $# -gt 0 ]; do
  case "$1" in
    --root) [ $# -ge 2 ] || { echo "install.sh: --root needs a directory" >&2; exit 64; }; root=$2; shift 2 ;;
    --root=*) root=${1#--root=}; shift ;;
    --no-enable) enable=0; shift ;;
    --no-user) create_user=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
  esac
done

src=$(cd "$(dirname "$0")/.." && pwd)
root=$(mkdir -p "$root" && cd "$root" && pwd)
# Paths below are absolute inside the target; $R prefixes them ("" when the target is /).
R=${root%/}
on_host=0
[ -z "$R" ] && on_host=1

log() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

[ -f "$src/dist/src/cli/main.js" ] || die "no build in $src/dist: run 'npm ci' and 'npx tsc -p .' first"
[ -d "$src/node_modules" ] || die "no node_modules in $src: run 'npm ci' first"
command -v npm >/dev/null 2>&1 || die "npm is needed to prune development dependencies"

# --- 1. The release, staged next to its final place and swapped in with one rename ------------
opt="$R/opt/qrvend"
stage="$R/opt/.qrvend-stage.$$"
old="$R/opt/.qrvend-old.$$"
cleanup() { rm -rf "$stage" "$old"; }
trap cleanup EXIT
mkdir -p "$R/opt" "$stage/dist" "$stage/bin" "$stage/scripts" "$stage/share"
cp -a "$src/dist/src" "$stage/dist/src"
cp -a "$src/config" "$src/package.json" "$src/package-lock.json" "$stage/"
[ -f "$src/README.md" ] && cp "$src/README.md" "$stage/"
cp -a "$src/node_modules" "$stage/node_modules"
# Drops devDependencies (typescript, @types, test libraries) and keeps the already-compiled
# native modules (better-sqlite3, serialport, rpio): no compiler and no network on the machine.
(cd "$stage" && npm prune --omit=dev --ignore-scripts --offline --no-audit --no-fund --loglevel=error >/dev/null) ||
  die "npm prune failed in $stage"
install -m 0755 "$src/packaging/qrvend-wrapper.sh" "$stage/bin/qrvend"
# The unit's ExecStartPre/ExecStopPost: the trial of a configuration change from the fleet.
install -m 0755 "$src/packaging/qrvend-trial.sh" "$stage/bin/qrvend-trial"
# ...and the root side of remote updates, which refuses them on this flat layout (the .deb's
# releases side by side are what it activates; docs/releases.md).
install -m 0755 "$src/packaging/qrvend-release.sh" "$stage/bin/qrvend-release"
# The .deb's postinst creates /etc/qrvend/config.json from this copy.
install -m 0644 "$src/packaging/config.json.template" "$stage/share/config.json.template"
for s in qrvend-logs qrvend-serial-trace qrvend-test-vend; do
  install -m 0755 "$src/scripts/$s" "$stage/scripts/$s"
done
chmod -R u=rwX,go=rX "$stage"
if [ -e "$opt" ]; then mv "$opt" "$old"; fi
mv "$stage" "$opt"
log "release installed in $opt"

# --- 2. Commands on PATH -----------------------------------------------------------------------
mkdir -p "$R/usr/bin"
ln -sfn /opt/qrvend/bin/qrvend "$R/usr/bin/qrvend"
for s in qrvend-logs qrvend-serial-trace qrvend-test-vend; do
  ln -sfn "/opt/qrvend/scripts/$s" "$R/usr/bin/$s"
done

# --- 3. systemd: unit, user declaration, tmpfiles ----------------------------------------------
install -D -m 0644 "$src/systemd/qrvend.service" "$R/usr/lib/systemd/system/qrvend.service"
# The Start relay's unit, not enabled: an operator runs the relay on a server, not on every machine.
install -D -m 0644 "$src/systemd/qrvend-relay.service" "$R/usr/lib/systemd/system/qrvend-relay.service"
install -D -m 0644 "$src/packaging/qrvend.sysusers" "$R/usr/lib/sysusers.d/qrvend.conf"
install -D -m 0644 "$src/packaging/qrvend.tmpfiles" "$R/usr/lib/tmpfiles.d/qrvend.conf"
# /dev/gpiochip* to group gpio, for the chardev GPIO backend (docs/devices.md).
install -D -m 0644 "$src/packaging/qrvend-gpio.rules" "$R/usr/lib/udev/rules.d/60-qrvend-gpio.rules"

# --- 4. The user (only on this machine; an image gets it from sysusers.d at first boot) --------
if [ "$on_host" = 1 ] && [ "$create_user" = 1 ]; then
  if command -v systemd-sysusers >/dev/null 2>&1; then
    systemd-sysusers /usr/lib/sysusers.d/qrvend.conf
  else
    getent group gpio >/dev/null || groupadd --system gpio
    getent passwd qrvend >/dev/null ||
      useradd --system --user-group --home-dir /var/lib/qrvend --no-create-home --shell /usr/sbin/nologin qrvend
    usermod -a -G dialout,gpio,video qrvend
  fi
  log "user qrvend ready ($(id -nG qrvend | tr ' ' ','))"
elif [ "$on_host" = 0 ]; then
  log "image tree: the qrvend user is created at first boot by systemd-sysusers"
fi
has_group=0
[ "$on_host" = 1 ] && getent group qrvend >/dev/null && has_group=1

# --- 5. Configuration: created once, never overwritten -----------------------------------------
install -d -m 0755 "$R/etc/qrvend"
if [ -e "$R/etc/qrvend/config.json" ]; then
  log "kept existing /etc/qrvend/config.json"
else
  install -m 0644 "$src/packaging/config.json.template" "$R/etc/qrvend/config.json"
  log "created /etc/qrvend/config.json from the template: set the CHANGE-ME values"
fi
token="$R/etc/qrvend/secret-token"
if [ ! -e "$token" ]; then
  # Created empty and private before anything can be written into it.
  (umask 0137 && : >"$token")
  log "created an empty /etc/qrvend/secret-token: write the 64-character SecretToken into it"
fi
chmod 0640 "$token"
if [ "$has_group" = 1 ]; then chown root:qrvend "$token"; fi

# --- 6. State directory ---------------------------------------------------------------------------
install -d -m 0750 "$R/var/lib/qrvend"
if [ "$has_group" = 1 ]; then chown qrvend:qrvend "$R/var/lib/qrvend"; fi

# --- 7. Enable: the wants symlink, made by hand so it works in an image without a running systemd
wants="$R/etc/systemd/system/multi-user.target.wants"
if [ "$enable" = 1 ]; then
  mkdir -p "$wants"
  ln -sfn /usr/lib/systemd/system/qrvend.service "$wants/qrvend.service"
  log "qrvend.service enabled (multi-user.target)"
fi

if [ "$on_host" = 1 ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  # An upgrade takes effect now when the agent was running; a first install waits for the config.
  systemctl try-restart qrvend.service || true
fi
log "done"
