/**
 * The artifact download against a real server on loopback: resume after cuts, Range ignored, the cap, tampering, TLS.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isQrvendError } from '../../src/core/errors.js';
import {
  ARTIFACT_FILE,
  PART_FILE,
  checkDownloadUrl,
  downloadArtifact,
  type DownloadOptions,
} from '../../src/updates/download.js';
import { startArtifactServer } from './support/artifact-server.js';
import { makeSelfSignedCert } from '../gateway/tls-fixture.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };
const BODY = randomBytes(300_000);
const MANIFEST = {
  size: BODY.length,
  sha256: createHash('sha256').update(BODY).digest('hex'),
  artifact: 'qrvend_9.1.0_amd64.tar.gz',
};
const PATH = '/releases/qrvend_9.1.0_amd64.tar.gz';

function options(
  dir: string,
  url: string,
  extra: Partial<DownloadOptions> = {},
): DownloadOptions & { fetched: number[]; progress: number[] } {
  const fetched: number[] = [];
  const progress: number[] = [];
  let clock = 0;
  return {
    url,
    manifest: MANIFEST,
    dir,
    caFile: null,
    maxBytes: 10 * BODY.length,
    fetchedBefore: 0,
    onFetched: (n) => fetched.push(n),
    onProgress: (b) => progress.push(b),
    // Every call moves the fake clock by 1 s: progress is reported at most every progressEveryMs of it.
    monotonicNow: () => (clock += 1000),
    progressEveryMs: 5_000,
    retryDelayMs: 0,
    idleTimeoutMs: 10_000,
    fetched,
    progress,
    ...extra,
  };
}

function tmp(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-dl-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a cut half-way is resumed with Range from the bytes on disk; the artifact is whole and checked', T, async (t) => {
  const dir = tmp(t);
  const server = await startArtifactServer({ body: BODY, path: PATH, cutAfter: 120_000, cuts: 2 });
  t.after(() => server.close());
  const o = options(join(dir, 'dl'), server.url);
  const artifact = await downloadArtifact(o);
  assert.equal(artifact, join(dir, 'dl', ARTIFACT_FILE));
  assert.deepEqual(readFileSync(artifact), BODY);
  assert.equal(existsSync(join(dir, 'dl', PART_FILE)), false);
  assert.equal(server.ranges[0], null);
  assert.equal(server.ranges.length, 3);
  assert.match(server.ranges[1]!, /^bytes=\d+-$/);
  assert.ok(Number(/\d+/.exec(server.ranges[1]!)![0]) > 0, 'the second request resumes past byte 0');
  // Everything received counted once: no byte fetched twice when the server honours Range.
  assert.equal(o.fetched.at(-1), BODY.length);
});

test('a part left by an earlier run (a restart) is hashed again and resumed', T, async (t) => {
  const dir = tmp(t);
  const server = await startArtifactServer({ body: BODY, path: PATH });
  t.after(() => server.close());
  mkdirSync(join(dir, 'dl'));
  writeFileSync(join(dir, 'dl', PART_FILE), BODY.subarray(0, 100_000));
  const o = options(join(dir, 'dl'), server.url, { fetchedBefore: 100_000 });
  assert.deepEqual(readFileSync(await downloadArtifact(o)), BODY);
  assert.deepEqual(server.ranges, ['bytes=100000-']);
  assert.equal(o.fetched.at(-1), BODY.length);
});

test('a server that ignores Range: the file again from the start, counted against the cap', T, async (t) => {
  const dir = tmp(t);
  const server = await startArtifactServer({ body: BODY, path: PATH, cutAfter: 150_000, ignoreRange: true });
  t.after(() => server.close());
  const o = options(join(dir, 'dl'), server.url);
  assert.deepEqual(readFileSync(await downloadArtifact(o)), BODY);
  assert.ok(o.fetched.at(-1)! >= BODY.length + 150_000);
});

test('the data cap counts bytes across cuts and earlier runs, and stops the download', T, async (t) => {
  const dir = tmp(t);
  const server = await startArtifactServer({ body: BODY, path: PATH, cutAfter: 100_000, cuts: 10, ignoreRange: true });
  t.after(() => server.close());
  await assert.rejects(downloadArtifact(options(join(dir, 'dl'), server.url, { maxBytes: 450_000 })), (err: unknown) =>
    isQrvendError(err, 'UPDATE_DATA_CAP'),
  );
  // Already at the cap from before a restart: no request at all.
  const before = server.ranges.length;
  await assert.rejects(
    downloadArtifact(options(join(dir, 'dl2'), server.url, { maxBytes: 450_000, fetchedBefore: 450_000 })),
    (err: unknown) => isQrvendError(err, 'UPDATE_DATA_CAP'),
  );
  assert.equal(server.ranges.length, before);
});

test('a tampered artifact is refused and nothing is left to activate', T, async (t) => {
  const dir = tmp(t);
  const tampered = Buffer.from(BODY);
  tampered[200_000] = tampered[200_000]! ^ 1;
  const server = await startArtifactServer({ body: tampered, path: PATH });
  t.after(() => server.close());
  await assert.rejects(
    downloadArtifact(options(join(dir, 'dl'), server.url)),
    (err: unknown) => isQrvendError(err, 'UPDATE_ARTIFACT_MISMATCH') && /sha256/.test(err.message),
  );
  assert.equal(existsSync(join(dir, 'dl', ARTIFACT_FILE)), false);
  assert.equal(existsSync(join(dir, 'dl', PART_FILE)), false);
});

test('a server that sends more than the manifest size is refused', T, async (t) => {
  const dir = tmp(t);
  const server = await startArtifactServer({ body: Buffer.concat([BODY, Buffer.alloc(10)]), path: PATH });
  t.after(() => server.close());
  await assert.rejects(
    downloadArtifact(options(join(dir, 'dl'), server.url)),
    (err: unknown) => isQrvendError(err, 'UPDATE_ARTIFACT_MISMATCH') && /more than/.test(err.message),
  );
});

test('HTTP 404 ends the download with the status named', T, async (t) => {
  const dir = tmp(t);
  const server = await startArtifactServer({ body: BODY, path: PATH });
  t.after(() => server.close());
  await assert.rejects(
    downloadArtifact(options(join(dir, 'dl'), server.url.replace(PATH, '/missing'))),
    (err: unknown) => isQrvendError(err, 'UPDATE_DOWNLOAD_FAILED') && /HTTP 404/.test(err.message),
  );
});

test('progress is reported at a bounded rate, and once at the end', T, async (t) => {
  const dir = tmp(t);
  const server = await startArtifactServer({ body: BODY, path: PATH });
  t.after(() => server.close());
  const o = options(join(dir, 'dl'), server.url, { progressEveryMs: 1_000_000 });
  await downloadArtifact(o);
  // The fake clock moves 1 s a call, far less than the interval: only the final report.
  assert.deepEqual(o.progress, [BODY.length]);
  const often = options(join(dir, 'dl2'), server.url, { progressEveryMs: 1_000 });
  await downloadArtifact(often);
  assert.ok(often.progress.length > 2, 'with a short interval, reports as bytes arrive');
  assert.deepEqual(
    often.progress,
    [...often.progress].sort((a, b) => a - b),
    'never backwards',
  );
});

test('https with the CA file; without it the self-signed server is refused', T, async (t) => {
  const cert = makeSelfSignedCert();
  if (cert === null) return t.skip('openssl is not installed');
  t.after(() => cert.cleanup());
  const dir = tmp(t);
  const server = await startArtifactServer({
    body: BODY,
    path: PATH,
    tls: { cert: cert.cert, key: cert.key },
    cutAfter: 50_000,
  });
  t.after(() => server.close());
  assert.deepEqual(
    readFileSync(await downloadArtifact(options(join(dir, 'dl'), server.url, { caFile: cert.certFile }))),
    BODY,
  );
  await assert.rejects(
    downloadArtifact(options(join(dir, 'dl2'), server.url, { maxStalledAttempts: 2 })),
    (err: unknown) => isQrvendError(err, 'UPDATE_DOWNLOAD_FAILED'),
  );
});

test(
  'redirects are followed (relative or absolute, within the same ' +
    'rules), at most 3 hops, from the offered URL at every attempt',
  T,
  async (t) => {
    const dir = tmp(t);
    const server = await startArtifactServer({
      body: BODY,
      path: PATH,
      redirectChain: ['/a', '/b'],
      cutAfter: 100_000,
    });
    t.after(() => server.close());
    const origin = new URL(server.url).origin;
    const o = options(join(dir, 'dl'), `${origin}/a`);
    assert.deepEqual(readFileSync(await downloadArtifact(o)), BODY);
    // Attempt 1: /a -> /b -> PATH (cut); attempt 2 again from /a, resuming at PATH.
    assert.deepEqual(
      server.ranges.map((r) => r !== null),
      [false, false, false, true, true, true],
    );
    const loop = await startArtifactServer({ body: BODY, path: PATH, redirectChain: ['/1', '/2', '/3', '/4', '/5'] });
    t.after(() => loop.close());
    await assert.rejects(
      downloadArtifact(options(join(dir, 'dl2'), `${new URL(loop.url).origin}/1`)),
      (err: unknown) => isQrvendError(err, 'UPDATE_DOWNLOAD_FAILED') && /more than 3/.test(err.message),
    );
  },
);

test('only https, or http to loopback; no credentials in the URL', T, () => {
  assert.equal(checkDownloadUrl('https://repo.example/a').hostname, 'repo.example');
  assert.equal(checkDownloadUrl('http://127.0.0.1:8080/a').port, '8080');
  for (const bad of ['http://repo.example/a', 'ftp://127.0.0.1/a', 'https://u:p@repo.example/a', 'not a url']) {
    assert.throws(
      () => checkDownloadUrl(bad),
      (err: unknown) => isQrvendError(err, 'UPDATE_MANIFEST_INVALID'),
      bad,
    );
  }
});

test(
  'an empty or missing updates.caFile is refused before anything is fetched, naming the key and the file',
  T,
  async (t) => {
    const dir = tmp(t);
    const empty = join(dir, 'empty-ca.pem');
    writeFileSync(empty, '');
    // No server: a refusal must come from the CA file, not from a connection.
    await assert.rejects(
      downloadArtifact(options(join(dir, 'dl'), 'https://127.0.0.1:1/a.tar.gz', { caFile: empty })),
      (err: unknown) =>
        isQrvendError(err) &&
        err.code === 'CONFIG_UNREADABLE' &&
        /updates\.caFile .*empty-ca\.pem is empty/.test(err.message),
    );
    await assert.rejects(
      downloadArtifact(options(join(dir, 'dl'), 'https://127.0.0.1:1/a.tar.gz', { caFile: join(dir, 'missing.pem') })),
      (err: unknown) =>
        isQrvendError(err) &&
        err.code === 'CONFIG_UNREADABLE' &&
        /updates\.caFile .*missing\.pem cannot be read \(ENOENT\)/.test(err.message),
    );
    assert.equal(existsSync(join(dir, 'dl')), false, 'nothing written');
  },
);
