/**
 * The SecretToken never leaves: not in a log line (at trace level, through every kind of
 * answer and failure), not in a response, not in what the payment side receives.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { post, rawClient, startFixture, startPath, TOKEN, validStart } from './helpers.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

/** Pieces of the token that must not appear either (a truncated or sliced leak is still a leak). */
function tokenPieces(): string[] {
  const pieces = [TOKEN];
  for (let i = 0; i + 16 <= TOKEN.length; i += 8) pieces.push(TOKEN.slice(i, i + 16));
  return pieces;
}

function assertNoToken(where: string, text: string): void {
  for (const piece of tokenPieces()) assert.ok(!text.includes(piece), `${where} contains (part of) the SecretToken`);
}

test(
  'the SecretToken appears in no log line, response or accepted request',
  { timeout: TEST_DEADLINE_MS },
  async () => {
    const fx = await startFixture({
      logLevel: 'trace',
      start: { maxBodyBytes: 2048, rateLimit: { perSecond: 1, burst: 30 } },
      now: () => 0,
    });
    try {
      const replies: string[] = [];
      const send = async (body: unknown, options = {}) => replies.push((await post(fx.endpoint, body, options)).text);

      await send(validStart()); // accepted
      await send(validStart({ TerminalId: 'TERM-9999' })); // 50
      await send(validStart({ SecretToken: TOKEN.slice(0, 40) })); // 9, a prefix of the token
      await send(validStart({ SecretToken: `${TOKEN}${TOKEN}` })); // 9, the token inside a longer value
      await send(validStart({ AppUserId: 'x'.repeat(41) })); // 998 with the real token in the body
      await send(validStart({ ConsumerData: 'nope' })); // 998
      await send(`{"SecretToken":"${TOKEN}", broken json`); // 998 not JSON
      await send(validStart(), { path: startPath('nobody') }); // 9 via integratorName
      await send(validStart(), { method: 'PUT' }); // 405
      await send(validStart(), { headers: { 'Content-Type': 'text/plain' } }); // 415
      fx.payment.busy = 'session running';
      await send(validStart()); // 30
      fx.payment.busy = null;
      fx.payment.failAccept = new Error(`ledger failed while holding ${TOKEN}`); // a careless hook quoting the token
      await send(validStart()); // 6: the endpoint logs the hook's error, and must scrub it
      fx.payment.failAccept = null;
      await send(JSON.stringify(validStart()).padEnd(3000, ' ')); // 413 (body read then cut off)

      // Garbage with the token in the request line and headers: the parser refuses, we log the refusal.
      const { socket, response } = rawClient(fx.endpoint);
      socket.write(`POST /${TOKEN} HTTP/1.1\r\nX-Token: ${TOKEN}\r\nContent-Length: x\r\n\r\n`);
      replies.push((await response)?.body ?? '');
      socket.destroy();

      // Exhaust the rate limit: refusals are logged (debug) as well.
      for (let i = 0; i < 20; i += 1) await send(validStart());

      for (const reply of replies) assertNoToken('a response', reply);
      for (const accepted of fx.payment.accepted) assertNoToken('an accepted request', JSON.stringify(accepted));
      assert.ok(fx.payment.accepted.length >= 1);

      // The accept hook's own error message carried the token: the endpoint logs the error, so
      // this checks the log line kept only what is safe. Everything else must be clean too.
      const lines = fx.logLines;
      assert.ok(lines.length >= 20, `expected a log line per answer, got ${lines.length}`);
      const leaking = lines.filter((line) => tokenPieces().some((p) => line.includes(p)));
      assert.deepEqual(leaking, []);
      // And the log is useful: it says why, without the secret.
      assert.ok(lines.some((l) => /token mismatch/.test(l)));
      assert.ok(lines.some((l) => /Start accepted/.test(l)));
    } finally {
      await fx.close();
    }
  },
);
