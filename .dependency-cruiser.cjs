/**
 * The import rules of qrvend, checked by `npm run lint:deps` (dependency-cruiser) in CI after the
 * tests. CONTRIBUTING.md ("Layout") states them for a reader; this file is where they are written.
 *
 * Layers, lowest first: a module imports only from its own layer or from a layer below it. A folder
 * of src/ belongs to exactly one layer (a new folder must be added here, or the check fails).
 */
const LAYERS = [
  ['core', '^src/core/'], //                     the error type, logging, clocks, durable files
  ['ipc', '^src/ipc/'], //                       typed messages between the threads
  ['trust', '^src/trust/'], //                   keys and signed documents
  ['fleet contract', '^src/fleet/contract/'], // shared by both fleet link ends: topics, payloads, update manifests
  ['config', '^src/config/'], //                 the configuration schema and loader
  ['device', '^src/device/'], //                 hardware facts, GPIO
  ['pty', '^src/pty/'], //                       the pseudo-terminal pair
  ['gateway', '^src/gateway/'], //               the gateway protocol and client
  ['mdb transport', '^src/mdb/transport/'], //   the serial line
  ['mdb codec', '^src/mdb/codec/'], //           adapter-board lines <-> typed messages
  ['mdb reader', '^src/mdb/reader/'], //         the cashless reader state machine (pure)
  ['mdb machine loop', '^src/mdb/[^/]+$'], //    transport + codec + state machine + timers
  ['ledger', '^src/ledger/'], //                 SQLite ledger and outbox
  ['dex', '^src/dex/'], //                       DEX/UCS link and EVA-DTS audits
  ['updates', '^src/updates/'], //               remote updates on the machine
  ['start', '^src/start/'], //                   the Static QR Start endpoint
  ['flows', '^src/flows/'], //                   Static QR and Dynamic QR payment flows
  ['display', '^src/display/'], //               screens and the display worker
  ['doctor', '^src/doctor/'], //                 technician checks
  ['trace', '^src/trace/'], //                   the serial tap
  ['fleet link', '^src/fleet/(?!contract/)'], // the machine's and the operator's ends of the fleet link
  ['relay', '^src/relay/'], //                   the Start relay (operator side)
  ['console', '^src/console/'], //               the operator console (operator side)
  ['daemon', '^src/daemon/'], //                 wiring of the threads
  ['sim', '^src/sim/'], //                       the simulators a technician runs
  ['demo', '^src/demo/'], //                     `qrvend demo`
  ['cli', '^src/cli/'], //                       the `qrvend` command tree
];

const either = (patterns) => `(${patterns.join('|')})`;

const layerRules = LAYERS.slice(0, -1).map(([name, path], i) => ({
  name: `layer-${name.replace(/ /g, '-')}`,
  comment: `${name} imports only from its own layer or below (CONTRIBUTING.md, "Layout")`,
  severity: 'error',
  from: { path },
  to: { path: either(LAYERS.slice(i + 1).map(([, p]) => p)) },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      comment: 'an import circle: move what both sides need to a module they can both import',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-in-a-layer',
      comment: 'every folder of src/ belongs to a layer: add it to LAYERS in .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: either(LAYERS.map(([, p]) => p)) },
      to: {},
    },
    {
      name: 'product-not-to-rigs-or-tests',
      comment: 'the product (src/) is shipped; rigs/, test/, bench/ and release/ are not (docs/architecture.md)',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(rigs|test|bench|release)/' },
    },
    {
      name: 'product-not-to-dev-dependencies',
      comment: 'a devDependency is not installed in a release: the product may not import it',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'rigs-not-to-tests',
      comment: 'rigs serve the tests and benches, not the other way round',
      severity: 'error',
      from: { path: '^rigs/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
