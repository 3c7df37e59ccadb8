#!/bin/sh
# /opt/qrvend/bin/qrvend-release: the root side of remote updates (docs/releases.md). Shipped by the
# .deb outside every release and never replaced by a remote update, so that a bad release cannot
# break its own rollback. systemd runs it with full privileges around every start of the agent
# (systemd/qrvend.service):
#   ExecStartPre=-+/opt/qrvend/bin/qrvend-release start UPDATES_DIR [HEALTHY_WITHIN_S]
#   ExecStopPost=-+/opt/qrvend/bin/qrvend-release stop UPDATES_DIR
# UPDATES_DIR is the agent's updates.dir. At start, a release the agent asked for
# (UPDATES_DIR/activate.json, once the machine was idle) is verified again here, with the running
# release's `qrvend update verify` against the root-owned trust file, extracted into
# /opt/qrvend/releases/<version>, and made current for a trial:
#   - the agent on trial writes UPDATES_DIR/healthy.json once healthy: the trial is over;
#   - a trial start that ends before that (crash, exit, watchdog), or is not healthy within
#     HEALTHY_WITHIN_S (a transient timer runs `qrvend-release deadline`), brings the previous
#     release back and leaves UPDATES_DIR/rolled-back.json for the agent (UPDATE_ROLLED_BACK);
#   - a trial start not seen ending (a power cut) or stopped on request is counted; after MAX_CUT
#     of them in a row the next start rolls the release back too (the fourth, with MAX_CUT 3).
# Everything in UPDATES_DIR was written by the agent and is untrusted: a version must look like
# one, paths are never taken from those files, files are copied before they are checked. A refused
# activation leaves UPDATES_DIR/activation-refused.json ({version, reason}) for the agent.
# Also `installed VERSION` (the .deb's postinst: make VERSION current, keep the previous one).
# Paths honour $DPKG_ROOT, which is also how the tests run this script.
set -u
# The unit's UMask=0077 applies to this script too: the releases, the links' targets and the trial
# state must be readable by the agent (user qrvend). Nothing written here is secret.
umask 022

MAX_CUT=3
R=${DPKG_ROOT:-}
OPT=$R/opt/qrvend
STATE=$R/var/lib/qrvend-release
TRIAL=$STATE/trial.json
TRUST=$R/etc/qrvend/fleet-trust.json

say() { echo "qrvend-release: $*" >&2; }

usage() {
  echo "usage: qrvend-release start UPDATES_DIR [HEALTHY_WITHIN_S] | stop UPDATES_DIR | deadline UPDATES_DIR VERSION | installed VERSION" >&2
  exit 64
}

# is_version TEXT: MAJOR.MINOR.PATCH[-PRE], as src/fleet/contract/manifest-schema.ts RELEASE_VERSION.
is_version() {
  case $1 in '' | *[!0-9A-Za-z.-]*) return 1 ;; esac
  printf '%s\n' "$1" | grep -Eqx '(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})(-[0-9A-Za-z.]{1,32})?'
}

# json_field FILE NAME: the one string value of "NAME" in a small JSON file; fails otherwise.
json_field() {
  [ -f "$1" ] && [ ! -L "$1" ] && [ "$(wc -c <"$1")" -le 4096 ] || return 1
  found=$(grep -o "\"$2\"[[:space:]]*:[[:space:]]*\"[^\"]*\"" "$1") || return 1
  [ "$(printf '%s\n' "$found" | wc -l)" -eq 1 ] || return 1
  printf '%s\n' "$found" | sed 's/.*:[[:space:]]*"\(.*\)"$/\1/'
}

# json_number FILE NAME
json_number() {
  grep -o "\"$2\"[[:space:]]*:[[:space:]]*[0-9]\{1,9\}" "$1" 2>/dev/null | head -n 1 | sed 's/.*:[[:space:]]*//'
}

# write_durably FILE TEXT: temporary file, fsync, rename, fsync of the directory.
write_durably() {
  printf '%s\n' "$2" >"$1.tmp" && sync -- "$1.tmp" && mv -f -- "$1.tmp" "$1" && sync -- "${1%/*}"
}

# write_for_agent FILE TEXT: durably, readable and removable by the agent (UPDATES_DIR's owner).
write_for_agent() {
  write_durably "$1" "$2" || return 1
  chmod 0644 "$1" && chown --reference="${1%/*}" "$1" 2>/dev/null
  return 0
}

# The version a link (current, previous) leads to; empty when there is none.
link_version() {
  target=$(readlink -- "$OPT/$1" 2>/dev/null) || return 0
  case $target in releases/*) ;; *) return 0 ;; esac
  v=${target#releases/}
  if is_version "$v" && [ -d "$OPT/releases/$v" ]; then printf '%s\n' "$v"; fi
}

# set_link NAME VERSION: atomically (a new symlink renamed over the old one), then synced.
set_link() {
  ln -sfn -- "releases/$2" "$OPT/.$1.new" && mv -Tf -- "$OPT/.$1.new" "$OPT/$1" && sync -- "$OPT"
}

# Keeps the current and the previous release; older ones (and leftovers of a cut) go.
prune() {
  cur=$(link_version current)
  prev=$(link_version previous)
  for dir in "$OPT"/releases/* "$OPT"/releases/.incoming-*; do
    [ -d "$dir" ] || continue
    name=${dir##*/}
    [ "$name" = "$cur" ] || [ "$name" = "$prev" ] && continue
    rm -rf -- "$dir"
  done
  sync -- "$OPT/releases" 2>/dev/null
  return 0
}

now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# read_trial: sets trial_version, trial_previous, trial_runs from the root's own trial.json.
read_trial() {
  trial_version=$(json_field "$TRIAL" version) || trial_version=
  trial_previous=$(json_field "$TRIAL" previous) || trial_previous=
  trial_runs=$(json_number "$TRIAL" runs)
  case $trial_runs in '' | *[!0-9]*) trial_runs=$MAX_CUT ;; esac
}

# healthy VERSION: the agent on trial said it is healthy on VERSION.
healthy() {
  [ "$(json_field "$upd/healthy.json" version 2>/dev/null)" = "$1" ]
}

# healthy.json stays: the agent's update status reads it too; the next activation removes it.
confirm() {
  rm -f -- "$TRIAL" && sync -- "$STATE"
  say "release $trial_version passed its trial (previous: $trial_previous, kept)"
}

# roll_back REASON (letters, digits, spaces and . , ( ) _ - only: it goes into JSON as it is).
# rolled-back.json is written first: cut short after it, the next start finishes the rollback.
roll_back() {
  if ! is_version "$trial_previous" || [ ! -d "$OPT/releases/$trial_previous" ]; then
    say "cannot roll back $trial_version: the previous release ($trial_previous) is not on disk"
    rm -f -- "$TRIAL"
    return 1
  fi
  if [ "$(json_field "$upd/rolled-back.json" version 2>/dev/null)" != "$trial_version" ]; then
    write_for_agent "$upd/rolled-back.json" "{\"version\":\"$trial_version\",\"previous\":\"$trial_previous\",\"at\":\"$(now)\",\"reason\":\"$1\"}" ||
      say "could not write $upd/rolled-back.json: the agent will not raise UPDATE_ROLLED_BACK"
  fi
  set_link current "$trial_previous" || return 1
  rm -f -- "$OPT/previous" "$TRIAL" "$upd/healthy.json" && sync -- "$STATE" "$OPT" || return 1
  # The release that failed goes: it is not a release to come back to.
  rm -rf -- "${OPT:?}/releases/$trial_version"
  say "release $trial_version was rolled back to $trial_previous: $1"
}

# refuse VERSION REASON: the agent reports it (event `failed`); the request is consumed.
refuse() {
  write_for_agent "$upd/activation-refused.json" "{\"version\":\"$1\",\"at\":\"$(now)\",\"reason\":\"$2\"}"
  rm -f -- "$upd/activate.json" "$STATE/incoming.tar.gz" "$STATE/incoming.manifest.json"
  [ -z "$1" ] || rm -rf -- "$OPT/releases/.incoming-$1"
  sync -- "$upd" "$STATE" 2>/dev/null
  say "activation of ${1:-an unreadable request} refused: $2"
}

# A request found while a release is on trial. Naming that release, it is the request of the
# activation that began the trial, cut short after the switch (a power cut): consumed without a
# word, since refusing it would report a release on trial as failed. Another version waits for
# the trial's end: refused (the agent reports it; the fleet offers it again).
leftover_request() {
  asked=$(json_field "$upd/activate.json" version 2>/dev/null) || asked=
  if [ "$asked" = "$trial_version" ]; then
    rm -f -- "$upd/activate.json" "$STATE/incoming.tar.gz" "$STATE/incoming.manifest.json"
    sync -- "$upd" "$STATE" 2>/dev/null
    prune
    return 0
  fi
  refuse "$asked" "release $trial_version is on trial"
}

# The deadline of the trial: a transient timer, so that it is judged outside the agent's process.
schedule_deadline() {
  [ -z "$R" ] && [ -d /run/systemd/system ] && command -v systemd-run >/dev/null 2>&1 || return 0
  systemctl stop qrvend-release-deadline.timer >/dev/null 2>&1
  systemd-run --quiet --collect --unit=qrvend-release-deadline --on-active="${healthy_within}s" \
    --timer-property=AccuracySec=1s "$OPT/bin/qrvend-release" deadline "$upd" "$1" ||
    say "could not start the trial's deadline timer: a trial start that never becomes healthy is rolled back at its end"
}

# The activation runs inside the unit's start (ExecStartPre), under TimeoutStartSec (60 s), which
# is meant for the agent's own start: copying, verifying and extracting a release of about 70 MB
# took 18-36 s on the emulated Pi and can take longer on a slow SD card, and systemd would kill it
# and try again at every start. So the start is kept alive while it runs, 30 s at a time
# (EXTEND_TIMEOUT_USEC; NotifyAccess=all lets this control process send it; systemd-notify waits
# until systemd has read it). Outside systemd (no NOTIFY_SOCKET) there is no timeout to extend.
keepalive=
start_keepalive() {
  [ -n "${NOTIFY_SOCKET:-}" ] && command -v systemd-notify >/dev/null 2>&1 || return 0
  (
    nap=
    trap 'kill $nap 2>/dev/null; exit 0' TERM
    while :; do
      systemd-notify EXTEND_TIMEOUT_USEC=30000000 >/dev/null 2>&1 || exit 0
      sleep 10 &
      nap=$!
      wait "$nap"
    done
  ) &
  keepalive=$!
}
stop_keepalive() {
  [ -z "$keepalive" ] || { kill "$keepalive" 2>/dev/null; wait "$keepalive" 2>/dev/null; }
  keepalive=
}

activate() {
  start_keepalive
  activate_release
  activated=$?
  stop_keepalive
  return "$activated"
}

activate_release() {
  version=$(json_field "$upd/activate.json" version) || { refuse "" "activate.json is not a request this script can read"; return 0; }
  is_version "$version" || { refuse "" "activate.json names no valid version"; return 0; }
  current=$(link_version current)
  if [ "$version" = "$current" ]; then
    rm -f -- "$upd/activate.json"
    return 0
  fi
  [ -n "$current" ] || { refuse "$version" "this machine is not installed side by side (install the qrvend .deb for remote updates)"; return 0; }
  [ -f "$TRUST" ] || { refuse "$version" "no fleet trust file at /etc/qrvend/fleet-trust.json"; return 0; }
  dl=$upd/downloads/$version
  for f in manifest.json artifact.tar.gz; do
    if [ ! -f "$dl/$f" ] || [ -L "$dl/$f" ]; then refuse "$version" "downloads/$version/$f is missing or not a plain file"; return 0; fi
  done
  # Copies first, owned by root: the agent cannot change what is checked after the check.
  incoming=$STATE/incoming.tar.gz
  if ! { cp -- "$dl/manifest.json" "$STATE/incoming.manifest.json" && cp -- "$dl/artifact.tar.gz" "$incoming"; }; then
    refuse "$version" "could not copy the download (disk full?)"
    return 0
  fi
  # Verified by the running release against the root-owned trust file: signature, expiry,
  # architecture, no downgrade from the running version, size and sha256 of the artifact.
  if ! out=$(timeout 300 "$OPT/current/bin/qrvend" update verify --manifest "$STATE/incoming.manifest.json" \
    --artifact "$incoming" --trust "$TRUST" --installed "$current" 2>&1); then
    say "$out"
    # Only the error's code goes into the agent's file (capitals and _: safe in JSON as it is).
    code=$(printf '%s\n' "$out" | sed -n 's/^qrvend: \([A-Z][A-Z_]*\): .*/\1/p' | head -n 1)
    refuse "$version" "qrvend update verify refused the manifest or the artifact (${code:-no code}; journalctl -u qrvend says why)"
    return 0
  fi
  tmp=$OPT/releases/.incoming-$version
  if ! { rm -rf -- "$tmp" && mkdir -p -- "$tmp"; }; then
    refuse "$version" "could not make $tmp"
    return 0
  fi
  # Only this version's tree: a signed artifact of another version does not carry it.
  if ! tar -xzf "$incoming" -C "$tmp" "opt/qrvend/releases/$version" 2>/dev/null ||
    [ ! -x "$tmp/opt/qrvend/releases/$version/bin/qrvend" ]; then
    refuse "$version" "the artifact does not carry release $version"
    return 0
  fi
  sync
  if ! { rm -rf -- "${OPT:?}/releases/$version" && mv -- "$tmp/opt/qrvend/releases/$version" "$OPT/releases/$version" &&
    rm -rf -- "$tmp" && sync -- "$OPT/releases"; }; then
    refuse "$version" "could not move the release into /opt/qrvend/releases"
    return 0
  fi
  # An earlier trial's verdicts go before this trial begins: cut short after the switch, a
  # healthy.json or rolled-back.json naming this version (tried and rolled back before) would be
  # read as this trial's.
  rm -f -- "$upd/healthy.json" "$upd/rolled-back.json" && sync -- "$upd" || return 1
  # The trial is written before the switch: cut short between the two, the next start sees a
  # trial of a version that is not current, drops it and activates again.
  write_durably "$TRIAL" "{\"version\":\"$version\",\"previous\":\"$current\",\"runs\":1}" || return 1
  set_link previous "$current" && set_link current "$version" || return 1
  # Cut short here, the next start finds the request naming the release on trial and consumes it.
  rm -f -- "$upd/activate.json" "$incoming" "$STATE/incoming.manifest.json"
  sync
  prune
  say "release $version is current, on trial (previous: $current)"
  schedule_deadline "$version"
}

action=${1:-}
case $action in
  installed)
    is_version "${2:-}" || usage
    [ -d "$OPT/releases/$2" ] || { say "no /opt/qrvend/releases/$2"; exit 1; }
    mkdir -p -- "$STATE" && chmod 0755 "$STATE"
    old=$(link_version current)
    if [ -n "$old" ] && [ "$old" != "$2" ]; then set_link previous "$old" || exit 1; fi
    set_link current "$2" || exit 1
    # A release installed by hand ends any trial: it is what the administrator chose.
    rm -f -- "$TRIAL"
    prune
    exit 0
    ;;
  start | stop | deadline) ;;
  *) usage ;;
esac
upd=${2:-}
case $upd in /*) ;; *) usage ;; esac
healthy_within=180
if [ "$action" = start ]; then
  healthy_within=${3:-180}
  case $healthy_within in '' | *[!0-9]*) usage ;; esac
  if [ "$healthy_within" -lt 30 ] || [ "$healthy_within" -gt 3600 ]; then usage; fi
fi
# What runs around every start: nothing on trial, nothing asked: nothing to do, nothing written.
[ -e "$TRIAL" ] || [ -e "$upd/activate.json" ] || exit 0
if [ ! -d "$STATE" ]; then mkdir -p -- "$STATE" && chmod 0755 "$STATE" || exit 1; fi

trial_version=
if [ -e "$TRIAL" ]; then
  read_trial
  if [ "$trial_version" != "$(link_version current)" ]; then
    # The switch never happened (a cut), or a release was installed by hand since.
    rm -f -- "$TRIAL"
    trial_version=
  fi
fi

case $action in
  start)
    if [ -n "$trial_version" ]; then
      if [ "$(json_field "$upd/rolled-back.json" version 2>/dev/null)" = "$trial_version" ]; then
        roll_back "finishing a rollback that was cut short" || exit 1
      elif healthy "$trial_version"; then
        confirm
      elif [ "$trial_runs" -ge "$MAX_CUT" ]; then
        roll_back "the trial start was cut short $trial_runs times in a row (power cuts, or the board itself failed)" || exit 1
      else
        write_durably "$TRIAL" "{\"version\":\"$trial_version\",\"previous\":\"$trial_previous\",\"runs\":$((trial_runs + 1))}" || exit 1
        say "trial start of $trial_version again after $trial_runs cut short"
        schedule_deadline "$trial_version"
        [ ! -e "$upd/activate.json" ] || leftover_request
        exit 0
      fi
    fi
    [ ! -e "$upd/activate.json" ] || activate
    ;;
  stop)
    [ -n "$trial_version" ] || exit 0
    if healthy "$trial_version"; then
      confirm
      exit 0
    fi
    # systemd's account of how the agent ended (systemd.exec(5)); only safe characters go further.
    result=$(printf '%s' "${SERVICE_RESULT:-unknown}" | tr -cd 'A-Za-z0-9_-')
    code=$(printf '%s' "${EXIT_CODE:-unknown}" | tr -cd 'A-Za-z0-9_-')
    status=$(printf '%s' "${EXIT_STATUS:-}" | tr -cd 'A-Za-z0-9_-')
    # Stopped on request (systemctl stop, a reboot): no verdict; counted like a power cut.
    [ "$result" = success ] && [ "$code" = exited ] && [ "$status" = 0 ] && exit 0
    roll_back "the trial start ended before it was confirmed healthy (${result}, ${code} ${status})" || exit 1
    ;;
  deadline)
    [ -n "$trial_version" ] && [ "${3:-}" = "$trial_version" ] || exit 0
    if healthy "$trial_version"; then
      confirm
      exit 0
    fi
    roll_back "not healthy within the trial's deadline (updates.healthyWithinS)" || exit 1
    command -v systemctl >/dev/null 2>&1 && [ -z "$R" ] && systemctl --no-block restart qrvend.service
    ;;
esac
exit 0
