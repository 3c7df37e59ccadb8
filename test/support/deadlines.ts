/**
 * The hang guards of the suite, said once (docs/testing.md, "Deadlines: nothing hangs"). They are
 * sized for a loaded 2-core machine and are never a speed check: a passing test ends as soon as
 * its condition holds. Fixtures keep their own values (what their runs assert), and the field
 * test its own waits.
 */

/** The deadline of every test that starts a daemon, a CLI, a broker, a server or a thread. */
export const TEST_DEADLINE_MS = 180_000;

/** The deadline of every CLI child process a test spawns (spawnSync's or execFile's `timeout`). */
export const CHILD_DEADLINE_MS = 120_000;
