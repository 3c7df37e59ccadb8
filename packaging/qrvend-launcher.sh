#!/bin/sh
# /opt/qrvend/bin/qrvend of the .deb (also /usr/bin/qrvend and systemd's ExecStart): the release
# that /opt/qrvend/current links to, resolved once here so that the process runs from one release
# to its end even if `current` is switched meanwhile (docs/releases.md). `exec` keeps the PID: the
# node process is the unit's main process and the watchdog's target.
home=$(readlink -f /opt/qrvend/current) || home=
if [ ! -x "$home/bin/qrvend" ]; then
  echo "qrvend: /opt/qrvend/current does not lead to a release (reinstall the qrvend package)" >&2
  exit 1
fi
QRVEND_HOME=$home
export QRVEND_HOME
exec "$home/bin/qrvend" "$@"
