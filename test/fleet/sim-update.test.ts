/**
 * The simulated machines refuse what a machine refuses (rigs/fleet/update-answers.ts): an
 * unsigned or replayed offer, a manifest whose signature does not hold (altered, or signed by a key
 * the machine does not trust), a manifest for another architecture, the version already running.
 * Over a real broker, with the operator library's sendFleetCommand.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectFleet, sendFleetCommand } from '../../src/fleet/operator/index.js';
import { signStatement } from '../../src/trust/signed.js';
import { COMMAND_STATEMENT_KIND, commandStatement } from '../../src/fleet/contract/scopes.js';
import { machineTopics } from '../../src/fleet/contract/index.js';
import { startRolloutFleet, signManifest, RELEASE } from './support/rollout-kit.js';
import { testKey } from './support/operator-keys.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test('simulated machines check the offer and the manifest as a machine does', T, async (t) => {
  const fleet = await startRolloutFleet([{ id: 's1' }, { id: 's2', arch: 'armhf' }, { id: 's3', version: '1.1.0' }]);
  t.after(() => fleet.close());
  const { client, protocol } = await connectFleet({ url: fleet.broker.url }, { purpose: 'test' });
  t.after(() => client.endAsync(true));
  const offer = async (machineId: string, manifest: unknown, signer: typeof fleet.key | null = fleet.key) => {
    const { reply } = await sendFleetCommand(client, {
      prefix: 'qrvend',
      machineId,
      name: 'update.offer',
      args: { manifest, url: 'http://127.0.0.1:9/a.tar.gz', rolloutId: 'r-sim' },
      timeoutMs: 10_000,
      protocol,
      ...(signer ? { signer } : {}),
    });
    return reply;
  };
  const refusal = (reply: Awaited<ReturnType<typeof offer>>) =>
    reply.ok ? 'accepted' : `${reply.error.code}: ${reply.error.message}`;

  assert.match(refusal(await offer('s1', fleet.manifest, null)), /^UNAUTHORIZED: refused \(unsigned\)/);
  const reader = testKey('reader', ['read']);
  assert.match(refusal(await offer('s1', fleet.manifest, reader)), /^UNAUTHORIZED: refused \(unknown-key\)/);
  assert.match(
    refusal(await offer('s1', { ...fleet.manifest, size: fleet.manifest.size + 1 })),
    /^BAD_ARGS: update refused: UPDATE_SIGNATURE_REFUSED: the update manifest's signature is refused \(bad-signature\)/,
  );
  const outsider = testKey('outsider', ['update']);
  assert.match(
    refusal(await offer('s1', signManifest(outsider, RELEASE))),
    /^BAD_ARGS: update refused: UPDATE_SIGNATURE_REFUSED: the update manifest's signature is refused \(unknown-key\)/,
  );
  assert.match(
    refusal(await offer('s2', fleet.manifest)),
    /^BAD_ARGS: update refused: UPDATE_WRONG_ARCH: the update is built for arm64, this machine is armhf$/,
  );
  assert.match(
    refusal(await offer('s3', fleet.manifest)),
    /^BAD_ARGS: update refused: UPDATE_DOWNGRADE: the update's version 1\.1\.0 is not newer than the running 1\.1\.0$/,
  );
  assert.equal(fleet.machines.get('s2')!.status.update?.state, 'refused');

  // The same signed request twice: the second is a replay.
  const args = { manifest: fleet.manifest, url: 'http://127.0.0.1:9/a.tar.gz', rolloutId: 'r-sim' };
  const signature = signStatement(COMMAND_STATEMENT_KIND, commandStatement('s1', 'update.offer', args), {
    keyId: fleet.key.keyId,
    key: fleet.key.key,
    nowMs: Date.now(),
  });
  const replies: string[] = [];
  const topics = machineTopics('qrvend', 's1');
  client.on('message', (topic, payload) => {
    if (topic === topics.replies) replies.push(payload.toString());
  });
  await client.subscribeAsync(topics.replies, { qos: 1 });
  for (const correlationId of ['c1', 'c2'])
    await client.publishAsync(
      topics.command('update.offer'),
      JSON.stringify({ replyTo: topics.replies, correlationId, args, signature }),
      { qos: 1 },
    );
  const deadline = Date.now() + 10_000;
  while (replies.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(replies.length, 2);
  assert.ok(
    replies.some((r) => JSON.parse(r).ok === true),
    replies.join('\n'),
  );
  assert.ok(
    replies.some((r) => /refused \(replayed\)/.test(r)),
    replies.join('\n'),
  );
});
