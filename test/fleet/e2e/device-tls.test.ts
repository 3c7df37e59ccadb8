/**
 * The fleet link over TLS with a private CA and a client certificate (docs/decisions/fleet-link-first.md item 1): a TLS
 * front on loopback, in front of the test broker, that verifies the device's certificate; the
 * daemon must verify the front's self-signed certificate against fleet.caFile (the system CAs
 * would refuse it) and present fleet.certFile / fleet.keyFile (the front refuses a client
 * without it). The status arriving at the broker proves both.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type TLSSocket, type Server } from 'node:tls';
import { createConnection } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRig, until, type Rig } from '../../../rigs/rig.js';
import { startTestBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { makeSelfSignedCert, type TlsFixture } from '../../gateway/tls-fixture.js';
import { PREFIX, protocolFor, startWatcher, type FleetWatcher } from './support/fleet-watcher.js';
import { testKey, writeTrustFile } from '../support/operator-keys.js';
import { TEST_DEADLINE_MS } from '../../support/deadlines.js';

const MACHINE = 'M-E2E-TLS';
const operator = testKey('ops-tls', ['read']);

let broker: TestBroker | undefined;
let front: Server | undefined;
let serverCert: TlsFixture | null = null;
let clientCert: TlsFixture | null = null;
let rig: Rig | undefined;
let watcher: FleetWatcher | undefined;
const sockets = new Set<TLSSocket>();
let authorizedClients = 0;

before(async () => {
  serverCert = makeSelfSignedCert();
  clientCert = makeSelfSignedCert();
  if (serverCert === null || clientCert === null) return;
  broker = await startTestBroker();
  const upstream = broker.port;
  front = createServer(
    { cert: serverCert.cert, key: serverCert.key, ca: clientCert.cert, requestCert: true, rejectUnauthorized: true },
    (socket) => {
      sockets.add(socket);
      if (socket.authorized) authorizedClients += 1;
      const b = createConnection({ host: '127.0.0.1', port: upstream });
      const end = () => (sockets.delete(socket), socket.destroy(), b.destroy());
      socket.on('error', end).on('close', end);
      b.on('error', end).on('close', end);
      socket.pipe(b).pipe(socket);
    },
  );
  await new Promise<void>((resolve) => front!.listen(0, '127.0.0.1', () => resolve()));
  const port = (front.address() as { port: number }).port;
  rig = await createRig({
    config: {
      fleet: {
        url: `mqtts://127.0.0.1:${port}`,
        topicPrefix: PREFIX,
        machineId: MACHINE,
        protocolVersion: protocolFor(broker),
        caFile: serverCert.certFile,
        certFile: clientCert.certFile,
        keyFile: clientCert.keyFile,
      },
    },
  });
  writeTrustFile(rig.dir, [operator]);
  const layered = JSON.parse(readFileSync(rig.configFile, 'utf8'));
  layered.fleet.trustFile = join(rig.dir, 'fleet-trust.json');
  writeFileSync(rig.configFile, JSON.stringify(layered));
  watcher = await startWatcher(broker.url, protocolFor(broker), MACHINE, operator);
});

after(async () => {
  await watcher?.close();
  await rig?.close();
  for (const s of sockets) s.destroy();
  if (front) await new Promise<void>((resolve) => front!.close(() => resolve()));
  await broker?.close();
  serverCert?.cleanup();
  clientCert?.cleanup();
});

test(
  'the device verifies the broker against fleet.caFile and presents its client certificate',
  { timeout: TEST_DEADLINE_MS },
  async (t) => {
    if (rig === undefined || watcher === undefined) {
      t.skip('openssl is not installed: no certificates for the TLS front');
      return;
    }
    await rig.startAgent();
    await until(() => watcher!.lastStatus()?.online === true, 15_000, 'the status through the TLS front');
    assert.ok(authorizedClients >= 1, 'the front saw a client certificate it trusts');
    assert.equal((await watcher.command('ping')).ok, true);
    const output = JSON.stringify(rig.agent!.logs);
    assert.ok(!output.includes('PRIVATE KEY'), 'key material in the log');
  },
);
