/**
 * A release version as package.json and the .deb carry it: MAJOR.MINOR.PATCH, optional -pre.N.
 * Its own module, without zod, because the daemon's main thread checks the release trial's files
 * with it (src/updates/trial/release-trial.ts) and does not load zod (BENCHMARKS.md, memory).
 */
export const RELEASE_VERSION = /^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})(-[0-9A-Za-z.]{1,32})?$/;
