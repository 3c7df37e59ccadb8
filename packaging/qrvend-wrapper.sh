#!/bin/sh
# /opt/qrvend/bin/qrvend: the installed `qrvend` command (systemd's ExecStart, /usr/bin/qrvend).
# `exec` keeps the PID, so the node process is the unit's main process and the watchdog's target.
# QRVEND_NODE picks another node binary (e.g. one not on PATH).
QRVEND_HOME=${QRVEND_HOME:-/opt/qrvend}
exec "${QRVEND_NODE:-node}" "$QRVEND_HOME/dist/src/cli/main.js" "$@"
