/**
 * A fleet for `qrvend fleet update` tests: a real broker (aedes in `npm test`, mosquitto in
 * `npm run fleet-test`), simulated machines that answer `update.offer` with scripted behaviours
 * (rigs/fleet/update-answers.ts), an operator key of scope `update` in the machines' trust file,
 * and a manifest signed with it. Offers are counted per machine, so a test can say which machines
 * were never offered.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker, type TestBroker } from '../../../rigs/broker/index.js';
import { SimulatedMachine } from '../../../rigs/fleet/machine.js';
import { updateOfferHandler, type UpdateBehaviour } from '../../../rigs/fleet/update-answers.js';
import { loadKeyring } from '../../../src/trust/keys.js';
import { signManifest as sign } from '../../../src/updates/manifest.js';
import type { UpdateArch, UpdateManifest, UpdateManifestBody } from '../../../src/fleet/contract/manifest-schema.js';
import { testKey, writeTrustFile, type TestKey } from './operator-keys.js';

export interface RolloutFleet {
  broker: TestBroker;
  dir: string;
  key: TestKey;
  keyFile: string;
  manifestFile: string;
  manifest: UpdateManifest;
  machines: Map<string, SimulatedMachine>;
  offers: Map<string, number>;
  /** The arguments of `qrvend fleet update` common to every run: broker, key. */
  baseArgs: string[];
  close(): Promise<void>;
}

export interface MachineSpec {
  id: string;
  behaviour?: UpdateBehaviour;
  version?: string;
  arch?: UpdateArch;
}

/** A manifest for `body`, signed as `npm run release -- --sign` signs one (a document valid 30 days). */
export function signManifest(key: TestKey, body: UpdateManifestBody, nowMs = Date.now()): UpdateManifest {
  return sign(body, { keyId: key.keyId, key: key.key, nowMs, lifetimeMs: 30 * 24 * 3600_000 });
}

export const RELEASE: UpdateManifestBody = {
  version: '1.1.0',
  arch: 'arm64',
  artifact: 'qrvend_1.1.0_arm64.tar.gz',
  size: 4096,
  sha256: 'a'.repeat(64),
  minVersion: '1.0.0',
};

export async function startRolloutFleet(specs: MachineSpec[]): Promise<RolloutFleet> {
  const dir = mkdtempSync(join(tmpdir(), 'qrvend-rollout-'));
  const broker = await startTestBroker();
  const key = testKey('release-2026', ['update']);
  const keyFile = join(dir, 'update-key.pem');
  writeFileSync(keyFile, key.privatePem, { mode: 0o600 });
  const keyring = loadKeyring(writeTrustFile(dir, [key]));
  const manifest = signManifest(key, RELEASE);
  const manifestFile = join(dir, 'qrvend_1.1.0_arm64.manifest.json');
  writeFileSync(manifestFile, JSON.stringify(manifest));
  const behaviours = new Map(specs.map((s) => [s.id, s.behaviour ?? { kind: 'healthy' as const }]));
  const answer = updateOfferHandler({ keyring, behaviour: (id) => behaviours.get(id) ?? { kind: 'healthy' } });
  const offers = new Map<string, number>();
  const machines = new Map<string, SimulatedMachine>();
  const protocol = broker.protocolVersions.includes(5) ? 5 : 4;
  try {
    for (const spec of specs) {
      const machine = await SimulatedMachine.connect({
        url: broker.url,
        machineId: spec.id,
        protocol,
        version: spec.version ?? '1.0.0',
        arch: spec.arch ?? 'arm64',
        handlers: {
          'update.offer': (args, context) => {
            offers.set(spec.id, (offers.get(spec.id) ?? 0) + 1);
            return answer(args, context);
          },
        },
      });
      machines.set(spec.id, machine);
    }
  } catch (err) {
    for (const m of machines.values()) await m.client.endAsync(true).catch(() => undefined);
    await broker.close();
    throw err;
  }
  return {
    broker,
    dir,
    key,
    keyFile,
    manifestFile,
    manifest,
    machines,
    offers,
    baseArgs: ['--url', broker.url, '--sign-key', keyFile, '--key-id', key.keyId],
    async close() {
      for (const m of machines.values()) await m.client.endAsync(true).catch(() => undefined);
      await broker.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
