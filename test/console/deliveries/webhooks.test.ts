/**
 * Webhooks through the delivery queue to a real receiver on loopback that verifies each request
 * with the standardwebhooks package: the event feed in order with a cursor, a receiver answering
 * 500 then 200 (the same webhook-id again), one that never answers, one that redirects (not
 * followed), and the receiver URL checks.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeEventBatch } from '../../../src/console/store/event-batch.js';
import { addEndpoint, findEndpoint } from '../../../src/console/store/webhook-queries.js';
import { newWebhookSecret } from '../../../src/console/deliveries/signing.js';
import type { lookup } from 'node:dns';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { postWebhook } from '../../../src/console/deliveries/webhook-post.js';
import { makeSelfSignedCert } from '../../gateway/tls-fixture.js';
import { checkReceiverUrl, guardedLookup, refusedAddress } from '../../../src/console/deliveries/receiver-address.js';
import { openDatabase, stopDatabases } from '../store/databases.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { TestClock, saleEvent, testWorker } from './support.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);
const T = { timeout: TEST_DEADLINE_MS };

test('the event feed arrives signed, in order, with a cursor to resume from', T, async (t) => {
  const store = (await openDatabase(t, 'sqlite'))!;
  const secret = newWebhookSecret();
  const receiver = await startReceiver(secret);
  try {
    await storeEventBatch(store.db, [saleEvent('before')]);
    const clock = new TestClock(Date.now());
    const id = await addEndpoint(
      store.db,
      { owner: 'ana', url: receiver.url, secret, events: true, alerts: false, from: 'now' },
      new Date().toISOString(),
    );
    await storeEventBatch(store.db, [saleEvent('s1', 'vm-2'), saleEvent('s2', 'vm-1'), saleEvent('s3', 'vm-2')]);
    const worker = testWorker(store, clock, { feedBatch: { events: 2, bytes: 1_000_000 } });
    assert.equal(await worker.runOnce(), 1);
    assert.equal(await worker.runOnce(), 1);
    assert.equal(await worker.runOnce(), 0);
    assert.deepEqual(
      receiver.received.map((r) => r.verifyError),
      [null, null],
    );
    const [first, second] = receiver.received.map((r) => r.json);
    assert.equal(first!.type, 'events');
    const events = [first!, second!].flatMap((b) => b.data.events as { position: number; eventId: string }[]);
    // 'before' was stored before the endpoint was added with from: now.
    assert.deepEqual(
      events.map((e) => [e.position, e.eventId]),
      [
        [2, 's1'],
        [3, 's2'],
        [4, 's3'],
      ],
    );
    assert.deepEqual([first!.data.after, first!.data.cursor, second!.data.after, second!.data.cursor], [1, 3, 3, 4]);
    assert.notEqual(receiver.received[0]!.id, receiver.received[1]!.id);
    assert.equal((await findEndpoint(store.db, id))!.feed_cursor, 4);
  } finally {
    await receiver.close();
    await store.remove();
  }
});

test('a receiver answering 500 then 200 gets the same webhook-id again, after the backoff', T, async (t) => {
  const store = (await openDatabase(t, 'sqlite'))!;
  const secret = newWebhookSecret();
  const receiver = await startReceiver(secret);
  receiver.answer = (n) => ({ status: n === 0 ? 500 : 200 });
  try {
    const clock = new TestClock(Date.now());
    await addEndpoint(
      store.db,
      { owner: 'ana', url: receiver.url, secret, events: true, alerts: false, from: 'now' },
      '',
    );
    await storeEventBatch(store.db, [saleEvent('s1')]);
    const worker = testWorker(store, clock);
    assert.equal(await worker.runOnce(), 1);
    // Not due before its 5 s.
    clock.advance(4_000);
    assert.equal(await worker.runOnce(), 0);
    clock.advance(1_000);
    assert.equal(await worker.runOnce(), 1);
    assert.equal(receiver.received.length, 2);
    assert.equal(receiver.received[0]!.id, receiver.received[1]!.id);
    assert.equal(receiver.received[0]!.body, receiver.received[1]!.body);
    assert.deepEqual(
      receiver.received.map((r) => r.verifyError),
      [null, null],
    );
    const log = await store.db.selectFrom('delivery_attempts').select(['status', 'error']).orderBy('id').execute();
    assert.deepEqual(
      log.map((l) => l.status),
      [500, 200],
    );
    assert.match(log[0]!.error!, /answered 500: answer body/);
    assert.deepEqual(worker.counters, { attempts: 2, delivered: 1, failed: 1, givenUp: 0, claimLost: 0 });
  } finally {
    await receiver.close();
    await store.remove();
  }
});

test('a receiver that never answers fails the attempt within its time bound', T, async (t) => {
  const store = (await openDatabase(t, 'sqlite'))!;
  const secret = newWebhookSecret();
  const receiver = await startReceiver(secret);
  receiver.answer = () => 'hang';
  try {
    const clock = new TestClock(Date.now());
    await addEndpoint(
      store.db,
      { owner: 'ana', url: receiver.url, secret, events: true, alerts: false, from: 'now' },
      '',
    );
    await storeEventBatch(store.db, [saleEvent('s1')]);
    const worker = testWorker(store, clock, { post: { policy: { allowPrivate: false }, timeoutMs: 300, ca: null } });
    assert.equal(await worker.runOnce(), 1);
    const [attempt] = await store.db.selectFrom('delivery_attempts').selectAll().execute();
    assert.equal(attempt!.status, null);
    assert.match(attempt!.error!, /ETIMEDOUT/);
    const [delivery] = await store.db.selectFrom('deliveries').selectAll().execute();
    assert.equal(delivery!.state, 'pending');
    assert.equal(Number(delivery!.next_ms), clock.ms + 5_000);
  } finally {
    await receiver.close();
    await store.remove();
  }
});

test('a redirect is not followed: the attempt fails naming where it pointed', T, async (t) => {
  const store = (await openDatabase(t, 'sqlite'))!;
  const secret = newWebhookSecret();
  const receiver = await startReceiver(secret);
  const elsewhere = await startReceiver(secret);
  receiver.answer = () => ({ status: 307, location: elsewhere.url });
  try {
    const clock = new TestClock(Date.now());
    await addEndpoint(
      store.db,
      { owner: 'ana', url: receiver.url, secret, events: true, alerts: false, from: 'now' },
      '',
    );
    await storeEventBatch(store.db, [saleEvent('s1')]);
    assert.equal(await testWorker(store, clock).runOnce(), 1);
    assert.equal(elsewhere.received.length, 0);
    const [attempt] = await store.db.selectFrom('delivery_attempts').selectAll().execute();
    assert.equal(attempt!.status, 307);
    assert.match(attempt!.error!, new RegExp(`redirect to ${elsewhere.url} not followed`));
  } finally {
    await receiver.close();
    await elsewhere.close();
    await store.remove();
  }
});

test('receiver URLs: https, or http on loopback; never link-local; private networks only when allowed', () => {
  const strict = { allowPrivate: false };
  assert.equal(checkReceiverUrl('https://hooks.example.com/x', strict).hostname, 'hooks.example.com');
  assert.equal(checkReceiverUrl('http://127.0.0.1:9/x', strict).port, '9');
  assert.equal(checkReceiverUrl('http://[::1]:9/x', strict).port, '9');
  for (const [url, why] of [
    ['http://hooks.example.com/x', /plain http:\/\/ only to loopback/],
    ['ftp://hooks.example.com/x', /ftp: is not https:/],
    ['https://169.254.169.254/latest', /link-local/],
    ['https://[::ffff:169.254.169.254]/latest', /link-local/],
    ['https://10.1.2.3/x', /private network/],
    ['https://user:pw@hooks.example.com/x', /user or password/],
    ['not a url', /is not a URL/],
  ] as const) {
    assert.throws(() => checkReceiverUrl(url, strict), why, url);
  }
  assert.equal(checkReceiverUrl('https://10.1.2.3/x', { allowPrivate: true }).hostname, '10.1.2.3');
  assert.match(refusedAddress('192.168.1.5', strict) ?? '', /private/);
  assert.equal(refusedAddress('192.168.1.5', { allowPrivate: true }), null);
  assert.equal(refusedAddress('93.184.216.34', strict), null);
});

test('a name that resolves to a refused address is refused at each connection (DNS rebinding)', async () => {
  const answers = ['127.0.0.1', '10.0.0.7', '169.254.169.254'];
  let n = 0;
  const resolver = ((
    _name: string,
    _options: object,
    cb: (e: null, a: { address: string; family: number }[]) => void,
  ) => cb(null, [{ address: answers[n++]!, family: 4 }])) as unknown as typeof lookup;
  const guarded = guardedLookup({ allowPrivate: false }, resolver);
  const ask = () =>
    new Promise<string>((resolve) =>
      guarded('hooks.example.com', {}, (err, address) => resolve(err?.message ?? String(address))),
    );
  assert.equal(await ask(), '127.0.0.1');
  assert.match(await ask(), /hooks.example.com: 10.0.0.7 is inside a private network/);
  assert.match(await ask(), /169.254.169.254 is a link-local/);
});

test(
  "an https receiver with a certificate of the site's own CA: refused unless webhooks.caFile names it",
  T,
  async (t) => {
    const tls = makeSelfSignedCert();
    if (tls === null) return t.skip('openssl is not installed');
    const server = createHttpsServer({ cert: tls.cert, key: tls.key }, (_req, res) => res.writeHead(204).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const url = `https://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/hook`;
    try {
      const policy = { allowPrivate: false };
      const untrusted = await postWebhook(url, {}, '{}', { policy, timeoutMs: 2000, ca: null });
      assert.equal(untrusted.ok, false);
      assert.match(untrusted.error ?? '', /SELF_SIGNED|certificate/i);
      const trusted = await postWebhook(url, {}, '{}', { policy, timeoutMs: 2000, ca: tls.cert });
      assert.deepEqual([trusted.ok, trusted.status], [true, 204]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      tls.cleanup();
    }
  },
);

test('an answer that never ends is read to 64 KiB and no further', T, async () => {
  let written = 0;
  const server = createHttpServer((_req, res) => {
    res.writeHead(500);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const more = () => {
      while (written < 64 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
    };
    res.on('drain', more);
    more();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/hook`;
  try {
    const r = await postWebhook(url, {}, '{}', { policy: { allowPrivate: false }, timeoutMs: 10_000, ca: null });
    assert.equal(r.status, 500);
    assert.ok((r.error ?? '').length <= 512);
    assert.ok(written < 64 * 1024 * 1024, 'the console stopped reading long before the sender was done');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
