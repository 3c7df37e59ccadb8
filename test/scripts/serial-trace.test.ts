/**
 * scripts/qrvend-serial-trace end to end with nothing beyond npm: a pty pair (the project's relay)
 * stands for the board's serial device (this test plays the board on the far end), and a
 * stand-in `qrvend` (QRVEND_BIN) runs the real `qrvend serial-tap` and, for `run`, plays the
 * agent: it opens whatever mdb.port the script's temporary config names, asks `V`, reads the
 * answer and exits. The trace must hold both directions, the temporary files must be gone
 * afterwards, and a device path carrying anything but a plain /dev path is refused before use.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO, runScript } from './helpers.js';
import { fakeBoard, ptyPair, tempDir, teardown } from '../doctor/helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const TRACE = join(REPO, 'scripts/qrvend-serial-trace');
const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

// `serial-tap` goes to the real CLI; `run` reads its --config, opens mdb.port, sends V, prints the
// first answer line and exits.
const FAKE_QRVEND = `#!${process.execPath}
if (process.argv[2] === 'serial-tap') {
  import(${JSON.stringify(MAIN)});
} else {
  const fs = require('node:fs');
  const config = JSON.parse(fs.readFileSync(process.argv[process.argv.indexOf('--config') + 1], 'utf8'));
  const fd = fs.openSync(config.mdb.port, 'r+');
  fs.writeSync(fd, 'V\\r\\n');
  const stream = fs.createReadStream(null, { fd, autoClose: false });
  let buf = '';
  stream.on('data', (c) => {
    buf += c.toString('latin1');
    if (buf.includes('\\n')) { console.log('agent got ' + buf.trim()); process.exit(0); }
  });
}
`;

function fakeQrvend(dir: string): string {
  const path = join(dir, 'fake-qrvend.cjs');
  writeFileSync(path, FAKE_QRVEND);
  chmodSync(path, 0o755);
  return path;
}

test(
  'the trace records agent -> board and board -> agent bytes through the serial tap',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const defer = teardown(t);
    const tmp = tempDir('qrvend-trace-');
    defer(tmp.cleanup);
    const pty = await ptyPair(tmp.dir);
    defer(pty.close);
    const board = await fakeBoard(pty.boardPath, '3.0.0', 'TRACEBOARD');
    defer(board.close);
    {
      const config = join(tmp.dir, 'config.json');
      // The device as the agent knows it: /dev/pts/N behind the pair's link.
      writeFileSync(
        config,
        JSON.stringify({ mdb: { port: realpathSync(pty.agentPath), baudRate: 115200 }, machine: { uniQr: 'X' } }),
      );
      const out = join(tmp.dir, 'trace.log');

      const run = await runScript(TRACE, ['--config', config, '--out', out, '--duration', '30', '--no-service'], {
        env: { QRVEND_BIN: fakeQrvend(tmp.dir), TMPDIR: tmp.dir },
        timeoutMs: 50_000,
      });
      assert.equal(run.code, 0, run.stderr);
      const trace = readFileSync(out, 'latin1');
      // "<" = written to the device (agent -> board), ">" = read from it (board -> agent).
      assert.match(trace, /^< \S+ length=3 agent -> board$/m);
      assert.match(trace, /^ 56 0d 0a +V\.\.$/m, 'V\r\n from the agent');
      assert.match(trace, /^> \S+ length=20 board -> agent$/m);
      assert.match(
        trace,
        /^ 76 2c 33 2e 30 2e 30 2c 54 52 41 43 45 42 4f 41 +v,3\.0\.0,TRACEBOA$/m,
        'the version line from the board',
      );
      assert.equal(statSync(out).mode & 0o777, 0o600, 'the trace is private');
      assert.match(run.stderr, /trace written to/);
      // The temporary pty and config are cleaned up.
      assert.deepEqual(
        readdirSync(tmp.dir).filter((f) => f.startsWith('qrvend-trace.')),
        [],
      );
    }
  },
);

test(
  'without --out the trace goes into a new private directory (not a predictable name)',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    const defer = teardown(t);
    const tmp = tempDir('qrvend-trace-default-');
    defer(tmp.cleanup);
    const pty = await ptyPair(tmp.dir);
    defer(pty.close);
    const board = await fakeBoard(pty.boardPath, '3.0.0', 'TRACEBOARD');
    defer(board.close);
    {
      const config = join(tmp.dir, 'config.json');
      writeFileSync(config, JSON.stringify({ mdb: { port: realpathSync(pty.agentPath) } }));
      const run = await runScript(TRACE, ['--config', config, '--duration', '30', '--no-service'], {
        env: { QRVEND_BIN: fakeQrvend(tmp.dir), TMPDIR: tmp.dir },
        timeoutMs: 50_000,
      });
      assert.equal(run.code, 0, run.stderr);
      const dirs = readdirSync(tmp.dir).filter((f) => /^qrvend-serial\.\w{6}$/.test(f));
      assert.equal(dirs.length, 1, `one private directory: ${readdirSync(tmp.dir).join(', ')}`);
      const dir = join(tmp.dir, dirs[0]!);
      assert.equal(statSync(dir).mode & 0o777, 0o700);
      assert.match(readFileSync(join(dir, 'serial.log'), 'latin1'), /^> \S+ length=20 board -> agent$/m);
      assert.ok(run.stderr.includes(`trace written to ${join(dir, 'serial.log')}`), run.stderr);
    }
  },
);

for (const [where, hostile] of [
  ['--device', '/dev/null!!SYSTEM:touch MARKER'],
  ['mdb.port', '/dev/null!!SYSTEM:touch MARKER'],
  ['--device', '/dev/ttyS0,rawer;touch MARKER'],
  ['mdb.port', '/dev/../tmp/MARKER'],
  ['--device', '$(touch MARKER)'],
] as const) {
  test(
    `a device path that is not a plain /dev path is refused before use (${where} ${JSON.stringify(hostile)})`,
    { timeout: TEST_DEADLINE_MS },
    async () => {
      const tmp = tempDir('qrvend-trace-hostile-');
      try {
        const marker = join(tmp.dir, 'pwned');
        const device = hostile.replace('MARKER', marker);
        const config = join(tmp.dir, 'config.json');
        writeFileSync(config, JSON.stringify({ mdb: { port: where === 'mdb.port' ? device : '/dev/null' } }));
        const args = [
          '--config',
          config,
          '--no-service',
          '--out',
          join(tmp.dir, 't.log'),
          ...(where === '--device' ? ['--device', device] : []),
        ];
        const run = await runScript(TRACE, args, { env: { QRVEND_BIN: fakeQrvend(tmp.dir), TMPDIR: tmp.dir } });
        assert.equal(run.code, 64, run.stderr);
        assert.match(run.stderr, /refusing the serial device path/);
        assert.equal(existsSync(marker), false, 'nothing ran');
        assert.equal(existsSync(join(tmp.dir, 't.log')), false);
      } finally {
        tmp.cleanup();
      }
    },
  );
}

test('a missing device is refused before anything is stopped', { timeout: TEST_DEADLINE_MS }, async () => {
  const tmp = tempDir('qrvend-trace-missing-');
  try {
    const config = join(tmp.dir, 'config.json');
    writeFileSync(config, JSON.stringify({ mdb: { port: '/dev/qrvend-no-such-board' } }));
    const run = await runScript(TRACE, ['--config', config, '--no-service', '--out', join(tmp.dir, 't.log')]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /does not exist/);
    assert.equal(existsSync(join(tmp.dir, 't.log')), false);
  } finally {
    tmp.cleanup();
  }
});
