/**
 * The update manifest (docs/decisions/remote-updates.md, docs/decisions/remote-updates-rollout.md): what an operator
 * signs with an `update` key
 * for one release artifact. Shared by `npm run release --sign`, `qrvend update verify`, the fleet
 * command `update.offer` and the root-side activator, so all of them read the same bytes the same
 * way; it sits in the fleet contract, below all of them (CONTRIBUTING.md, "Layout"). The
 * manifest's expiry is its signature's `expiresAt` (a document, so up to MAX_DOCUMENT_LIFETIME_MS,
 * src/trust/signed.ts).
 *
 * On disk and on the wire: `{ ...UpdateManifestBody, signature }`, the signature over
 * signedBytes(UPDATE_MANIFEST_KIND, body) (src/trust/canonical.ts).
 */
import { z } from 'zod';
import { SignatureSchema } from '../../trust/signed.js';
import { RELEASE_VERSION } from './release-version.js';

export { RELEASE_VERSION };

export const UPDATE_MANIFEST_KIND = 'update-manifest';

/** The architectures a release is built for (release/targets.ts), by their Debian names. */
export const UPDATE_ARCHES = ['arm64', 'armhf', 'amd64'] as const;
export type UpdateArch = (typeof UPDATE_ARCHES)[number];

/** The artifact's file name: the release tarball, never a path. */
export const ARTIFACT_NAME = /^qrvend_[0-9A-Za-z.~+-]{1,64}_(arm64|armhf|amd64)\.tar\.gz$/;
/** Largest artifact a machine downloads (a release tarball with Node is about 60 MB). */
export const MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;
/** Largest manifest file accepted (it is a few hundred bytes). */
export const MAX_MANIFEST_BYTES = 8 * 1024;

export const UpdateManifestBody = z.strictObject({
  version: z.string().regex(RELEASE_VERSION, 'must be MAJOR.MINOR.PATCH (optionally -pre.N)'),
  arch: z.enum(UPDATE_ARCHES),
  artifact: z.string().regex(ARTIFACT_NAME, 'must be a file name qrvend_<version>_<arch>.tar.gz'),
  size: z.number().int().positive().max(MAX_ARTIFACT_BYTES),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be 64 lower-case hex digits'),
  /** The oldest installed version this update applies to (a machine older than that is refused). */
  minVersion: z.string().regex(RELEASE_VERSION, 'must be MAJOR.MINOR.PATCH'),
});
export type UpdateManifestBody = z.infer<typeof UpdateManifestBody>;

export const UpdateManifest = UpdateManifestBody.extend({ signature: SignatureSchema });
export type UpdateManifest = z.infer<typeof UpdateManifest>;
