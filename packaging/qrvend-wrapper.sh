#!/bin/sh
# bin/qrvend of a release: the installed `qrvend` command (through /opt/qrvend/bin/qrvend, the
# launcher, from systemd's ExecStart and /usr/bin/qrvend; directly with scripts/install.sh).
# `exec` keeps the PID, so the node process is the unit's main process and the watchdog's target.
# QRVEND_HOME: the release this script belongs to (/opt/qrvend/releases/<version> from the .deb,
# set by the launcher; /opt/qrvend for a checkout installed with scripts/install.sh).
# Node: QRVEND_NODE when set; else the release's bundled one ($QRVEND_HOME/node/bin/node, which the
# native modules were built for); else `node` on PATH (a checkout installed with scripts/install.sh).
if [ -z "${QRVEND_HOME:-}" ]; then
  QRVEND_HOME=$(readlink -f "$0") && QRVEND_HOME=${QRVEND_HOME%/bin/*}
fi
if [ -z "${QRVEND_NODE:-}" ] && [ -x "$QRVEND_HOME/node/bin/node" ]; then
  QRVEND_NODE="$QRVEND_HOME/node/bin/node"
fi
# `qrvend run` (the daemon): cap the main thread's V8 heap near what it uses, so resident memory
# stays flat instead of filling with garbage (docs/decisions/targets.md: <= 1.25x bare Node, all threads). The
# workers' caps are set in the code (src/daemon/heap-limits.ts, which a test keeps equal to this).
# On an installed machine the technician's commands (doctor, outbox, config check) read the
# machine's configuration without being told; --config still wins.
if [ -z "${QRVEND_CONFIG:-}" ] && [ -r /etc/qrvend/config.json ]; then
  export QRVEND_CONFIG=/etc/qrvend/config.json
fi
QRVEND_RUN_NODE_FLAGS="--max-semi-space-size=1 --max-old-space-size=48"
if [ "$1" = run ]; then
  # glibc gives each thread its own malloc arena; two serve qrvend's threads as well and keep the
  # fragmentation of more arenas out of resident memory (about 7 MB measured, BENCHMARKS.md).
  export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"
  # shellcheck disable=SC2086 # the flags are meant to split into words
  exec "${QRVEND_NODE:-node}" $QRVEND_RUN_NODE_FLAGS "$QRVEND_HOME/dist/src/cli/main.js" "$@"
fi
exec "${QRVEND_NODE:-node}" "$QRVEND_HOME/dist/src/cli/main.js" "$@"
