#!/bin/sh
# The node the bench's daemon runs when QRVEND_BENCH_DAEMON_NODE_ARGS is set: the launcher execs
# it as $QRVEND_NODE, and it execs the real node with those options first (the PID stays the
# daemon's). Options such as --cpu-prof are refused in NODE_OPTIONS, so they travel as arguments.
# shellcheck disable=SC2086 # the options are meant to be split into words
exec "$QRVEND_BENCH_REAL_NODE" $QRVEND_BENCH_DAEMON_NODE_ARGS "$@"
