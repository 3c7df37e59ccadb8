/**
 * scripts/qrvend-serial-trace end to end with real socat: a pty pair stands for the board's
 * serial device (this test plays the board on the far end), and a stand-in agent (QRVEND_BIN)
 * opens whatever mdb.port the script's temporary config names, asks `V`, reads the answer and
 * exits. The trace must hold both directions, and the temporary files must be gone afterwards.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, runScript } from './helpers.js';
import { fakeBoard, ptyPair, tempDir } from '../doctor/helpers.js';

const TRACE = join(REPO, 'scripts/qrvend-serial-trace');

// Reads its --config, opens mdb.port, sends V, prints the first answer line and exits.
const FAKE_AGENT = `#!/usr/bin/env node
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
`;

test('the trace records agent -> board and board -> agent bytes through a socat interposer', { timeout: 60_000 }, async () => {
  const tmp = tempDir('qrvend-trace-');
  const pty = await ptyPair(tmp.dir);
  const board = await fakeBoard(pty.boardPath, '3.0.0', 'TRACEBOARD');
  try {
    const agent = join(tmp.dir, 'fake-qrvend');
    writeFileSync(agent, FAKE_AGENT.replace('#!/usr/bin/env node', `#!${process.execPath}`));
    chmodSync(agent, 0o755);
    const config = join(tmp.dir, 'config.json');
    writeFileSync(config, JSON.stringify({ mdb: { port: pty.agentPath, baudRate: 115200 }, machine: { uniQr: 'X' } }));
    const out = join(tmp.dir, 'trace.log');
    const before = readdirSync('/tmp').filter((f) => f.startsWith('qrvend-trace.'));

    const run = await runScript(TRACE, ['--config', config, '--out', out, '--duration', '30', '--no-service'], {
      env: { QRVEND_BIN: agent },
      timeoutMs: 50_000,
    });
    assert.equal(run.code, 0, run.stderr);
    const trace = readFileSync(out, 'latin1');
    // socat -v: "<" = written to the device (agent -> board), ">" = read from it (board -> agent).
    // Each chunk: a header line, then 16 bytes per line as hex and as text.
    assert.match(trace, /^< .*length=3 /m);
    assert.match(trace, /^ 56 0d 0a +V\.\.$/m, 'V\r\n from the agent');
    assert.match(trace, /^> .*length=20 /m);
    assert.match(trace, /^ 76 2c 33 2e 30 2e 30 2c 54 52 41 43 45 42 4f 41 +v,3\.0\.0,TRACEBOA$/m, 'the version line from the board');
    assert.match(run.stderr, /trace written to/);
    // The temporary pty and config are cleaned up.
    const after = readdirSync('/tmp').filter((f) => f.startsWith('qrvend-trace.'));
    assert.deepEqual(after, before);
  } finally {
    await board.close();
    await pty.close();
    tmp.cleanup();
  }
});

test('a missing device is refused before anything is stopped', { timeout: 30_000 }, async () => {
  const tmp = tempDir('qrvend-trace-missing-');
  try {
    const config = join(tmp.dir, 'config.json');
    writeFileSync(config, JSON.stringify({ mdb: { port: join(tmp.dir, 'nope') } }));
    const run = await runScript(TRACE, ['--config', config, '--no-service', '--out', join(tmp.dir, 't.log')]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /does not exist/);
    assert.equal(existsSync(join(tmp.dir, 't.log')), false);
  } finally {
    tmp.cleanup();
  }
});
