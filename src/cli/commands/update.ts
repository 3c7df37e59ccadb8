/**
 * `qrvend update verify`: checks a signed update manifest and its artifact by hand, exactly as the
 * agent does before it activates anything (src/updates/manifest.ts). The root-side activator runs
 * it too, as root, against the root-owned trust file: exit 0 means "good".
 */
import type { Command } from 'commander';

interface VerifyFlags {
  manifest: string;
  artifact: string;
  trust: string;
  installed?: string;
  arch?: string;
  json?: boolean;
}

export function register(program: Command): void {
  const update = program
    .command('update')
    .description('remote updates: check a signed release by hand (docs/updates-on-the-machine.md)');
  update
    .command('verify')
    .description(
      'check an update manifest (signature by an update key, expiry, version, ' +
        'architecture) and its artifact (size, sha256); exit 0 when good',
    )
    .requiredOption('--manifest <file>', 'the manifest, qrvend_<version>_<arch>.manifest.json')
    .requiredOption('--artifact <file>', 'the release tarball it names')
    .option('--trust <file>', 'the trust file with the update keys', '/etc/qrvend/fleet-trust.json')
    .option('--installed <version>', "the version it would replace (default: this qrvend's own)")
    .option('--arch <arch>', "the machine's architecture, arm64, armhf or amd64 (default: this machine's)")
    .option('--json', 'print the outcome as one JSON line')
    .action(async (flags: VerifyFlags) => {
      const { QrvendError } = await import('../../core/errors.js');
      const { VERSION } = await import('../../core/version.js');
      const { loadKeyring, TrustFileError } = await import('../../trust/keys.js');
      const { machineArch, readManifestFile, verifyArtifactFile, verifyManifest } =
        await import('../../updates/manifest.js');
      const { UPDATE_ARCHES } = await import('../../fleet/contract/manifest-schema.js');
      if (flags.arch !== undefined && !(UPDATE_ARCHES as readonly string[]).includes(flags.arch)) {
        throw new QrvendError('CLI_USAGE', `--arch: one of ${UPDATE_ARCHES.join(', ')}`);
      }
      let keyring;
      try {
        keyring = loadKeyring(flags.trust);
      } catch (err) {
        if (err instanceof TrustFileError)
          throw new QrvendError('UPDATE_SIGNATURE_REFUSED', `no update key to check with: ${err.message}`, {
            hint: 'name the trust file with --trust',
          });
        throw err;
      }
      const manifest = verifyManifest({
        manifest: readManifestFile(flags.manifest),
        keyring,
        nowMs: Date.now(),
        running: flags.installed ?? VERSION,
        arch: (flags.arch as ReturnType<typeof machineArch>) ?? machineArch(),
      });
      verifyArtifactFile(flags.artifact, manifest);
      const outcome = {
        ok: true,
        version: manifest.version,
        arch: manifest.arch,
        size: manifest.size,
        sha256: manifest.sha256,
        keyId: manifest.signature.keyId,
        expiresAt: new Date(manifest.signature.expiresAt).toISOString(),
      };
      process.stdout.write(
        flags.json
          ? `${JSON.stringify(outcome)}\n`
          : `good: qrvend ${manifest.version} for ${manifest.arch}, signed by ${manifest.signature.keyId}` +
              `, valid until ${outcome.expiresAt}; artifact ${manifest.size} bytes, sha256 matches\n`,
      );
    });
}
