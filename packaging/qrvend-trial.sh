#!/bin/sh
# /opt/qrvend/bin/qrvend-trial: the trial of a configuration change from the fleet (`config.set`,
# docs/fleet.md), judged outside the agent's process so that no overlay can keep the agent from
# coming back. systemd runs it around every start of the agent (systemd/qrvend.service):
#   ExecStartPre=-/opt/qrvend/bin/qrvend-trial start OVERLAY   before the agent starts
#   ExecStopPost=-/opt/qrvend/bin/qrvend-trial stop OVERLAY    after it ended, however it ended
# OVERLAY is fleet.configOverlay. config.set leaves beside it the overlay as it was
# (OVERLAY.previous) and the trial mark (OVERLAY.pending.json); the agent removes both once it
# is healthy on the change. Until then:
#   - a trial start that ends (crash, exit, killed by the watchdog or the start timeout) is a
#     failed trial: the previous overlay comes back at once, before systemd restarts the agent;
#   - a trial start not seen ending (a power cut, or the board itself died) or stopped on request
#     is counted in OVERLAY.trial-run; after MAX_CUT of them in a row the change is rolled back
#     too, so a change that takes the whole board down cannot pass for bad luck forever.
# A rollback leaves OVERLAY.rolled-back.json ({at, reason}): the agent raises CONFIG_ROLLED_BACK.
# Every write is durable (temporary file, fsync, rename, fsync of the directory). Files it cannot
# make sense of count against the change: in doubt, the previous overlay is the one known to work.
set -u

MAX_CUT=3

action=${1:-}
overlay=${2:-}
case $action in start | stop) ;; *)
  echo "usage: qrvend-trial start|stop OVERLAY" >&2
  exit 64
  ;;
esac
case $overlay in /*) ;; *)
  echo "qrvend-trial: OVERLAY must be an absolute path (fleet.configOverlay)" >&2
  exit 64
  ;;
esac

pending="$overlay.pending.json"
# What runs before and after every start: no change on trial, nothing to do (no process spawned).
[ -e "$pending" ] || exit 0

previous="$overlay.previous"
run="$overlay.trial-run"
dir=${overlay%/*}
dir=${dir:-/}

say() { echo "qrvend-trial: $*" >&2; }

# write_durably FILE TEXT
write_durably() {
  printf '%s\n' "$2" >"$1.tmp" && sync -- "$1.tmp" && mv -f -- "$1.tmp" "$1" && sync -- "$dir"
}

# roll_back REASON (letters, digits, spaces and . , ( ) _ - only: it goes into JSON as it is)
roll_back() {
  if [ -e "$previous" ]; then
    cp -- "$previous" "$overlay.tmp" && sync -- "$overlay.tmp" && mv -f -- "$overlay.tmp" "$overlay" || return 1
  else
    rm -f -- "$overlay" || return 1
  fi
  write_durably "$overlay.rolled-back.json" "{\"at\":\"$(date -u +%Y-%m-%dT%H:%M:%SZ)\",\"reason\":\"$1\"}" || return 1
  # `previous` goes last: cut short before that, the next start rolls back again (same result).
  rm -f -- "$pending" "$run" && sync -- "$dir" && rm -f -- "$previous" && sync -- "$dir" || return 1
  say "the configuration change from the fleet was rolled back: $1"
}

# Trial starts begun and not seen ending; anything but a number counts as too many.
cut=0
if [ -e "$run" ]; then
  cut=$(cat -- "$run" 2>/dev/null) || cut=
  case $cut in '' | *[!0-9]*) cut=$MAX_CUT ;; esac
fi

if [ "$action" = start ]; then
  if [ "$cut" -ge "$MAX_CUT" ]; then
    roll_back "the trial start was cut short $cut times in a row (power cuts, or the board itself failed)" || exit 1
    exit 0
  fi
  write_durably "$run" "$((cut + 1))" || exit 1
  [ "$cut" -eq 0 ] || say "trial start again after $cut cut short"
  exit 0
fi

# stop: the start that asked for the trial (config.set's own restart) has no trial-run mark yet.
[ -e "$run" ] || exit 0
# systemd's account of how the agent ended (systemd.exec(5)); only safe characters go further.
result=$(printf '%s' "${SERVICE_RESULT:-unknown}" | tr -cd 'A-Za-z0-9_-')
code=$(printf '%s' "${EXIT_CODE:-unknown}" | tr -cd 'A-Za-z0-9_-')
status=$(printf '%s' "${EXIT_STATUS:-}" | tr -cd 'A-Za-z0-9_-')
if [ "$result" = success ] && [ "$code" = exited ] && [ "$status" = 0 ]; then
  # Stopped on request (systemctl stop, a reboot): no verdict; counted like a power cut.
  exit 0
fi
roll_back "the trial start ended before it was confirmed healthy (${result}, ${code} ${status})" || exit 1
