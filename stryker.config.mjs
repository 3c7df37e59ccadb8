// Mutation testing of the money paths (issue 30, docs/testing.md "Mutation testing"): `npm run mutation`.
// Stryker copies the worktree into .stryker-tmp/, mutates the TypeScript there with every mutant
// switched off by default, builds it once with `npm run build`, then activates one mutant at a
// time through an environment variable. The tap runner runs each compiled test file as its own
// node process; its coverage is per file, so a mutant only runs the files that reach its code.
// Only the unit tests of the four money folders run: they are quick, and the daemon end-to-end
// tests (tens of seconds each) would make a run too long for a shared 2-core machine.

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'tap',
  plugins: ['@stryker-mutator/tap-runner'],
  mutate: [
    // Flows: amounts, Settlement/Cancel/Void bodies, closings and Cancel reasons, underpaid and currency checks.
    'src/flows/amounts.ts',
    'src/flows/bodies.ts',
    'src/flows/static-qr/flow.ts',
    'src/flows/dynamic-qr/machine.ts',
    // Ledger: the transition table, the body check, minor units, the outbox's retry and idempotency.
    'src/ledger/states.ts',
    'src/ledger/body-check.ts',
    'src/ledger/money.ts',
    'src/ledger/backoff.ts',
    'src/ledger/outbox.ts',
    // Start: the checks (token, identity, replay, busy) and the token comparison.
    'src/start/request-checks.ts',
    'src/start/secret-compare.ts',
    // Reader: funds, vend approval and vend results.
    'src/mdb/reader/payment-input.ts',
    'src/mdb/reader/transition.ts',
    'src/mdb/reader/common.ts',
  ],
  buildCommand: 'npm run build',
  // dist/ is rebuilt from the mutated sources in the sandbox; the rest is not needed to run the tests.
  ignorePatterns: ['dist', 'bench/results*.json', 'release/out', '/tmp', '/out', '/build', '/screens'],
  tap: {
    // The unit tests of the money folders. Left out, because they do not exercise the mutated
    // decisions: the ledger's fleet events, identity, corruption, migration and cash-sales tests,
    // and the Start endpoint's HTTP limits, connection guard and secrecy tests. Left out because
    // they cost seconds per mutant for what quicker files already reach: the Start fuzzer and the
    // relayed-Start tests (request-checks-in-process and endpoint cover the checks), the outbox CLI and the
    // write-failure tests (child processes; drainer and ledger tests cover the outbox).
    testFiles: [
      'dist/test/flows/**/*.test.js',
      'dist/test/ledger/{backoff,closing-facts,drainer,ledger,money-checks,outbox-clock,recovery,retry-verdicts,transition-table}.test.js',
      'dist/test/start/{endpoint,units,request-checks-in-process}.test.js',
      'dist/test/mdb/reader/**/*.test.js',
    ],
    nodeArgs: ['--test-reporter=tap', '--test-timeout=120000', '-r', '{{hookFile}}', '{{testFile}}'],
  },
  // String literals here are log lines, error texts and screen names; the decisions that compare
  // strings are still mutated (ConditionalExpression, EqualityOperator). Leaving them out halves
  // the run and the noise (docs/testing.md).
  mutator: { excludedMutations: ['StringLiteral'] },
  coverageAnalysis: 'perTest',
  concurrency: 2,
  // A busy shared machine stretches a test file's time; a mutant that loops still ends here.
  timeoutMS: 20000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // Results are kept in reports/stryker-incremental.json and reused for mutants whose code and
  // covering test files did not change (`npm run mutation -- --force` re-tests everything).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  thresholds: { high: 90, low: 85, break: null },
};
