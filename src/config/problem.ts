/**
 * One thing wrong with a configuration, as the loader and the remote-key checks report it: its own
 * module so both can use it without importing each other.
 */
export interface ConfigProblem {
  /** Dotted key path, e.g. `gateway.timeoutMs`. */
  path: string;
  reason: string;
}
