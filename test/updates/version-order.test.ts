import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareVersions, isReleaseVersion } from '../../src/updates/version-order.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

test('versions in semver precedence order, each pair compared both ways', T, () => {
  // Ascending; a string comparison gets 1.2.0-rc.10 vs rc.2, 1.10.0 vs 1.9.0 and the release vs its pre-releases wrong.
  const ordered = [
    '0.9.9',
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-alpha.beta',
    '1.0.0-beta',
    '1.0.0-beta.2',
    '1.0.0-beta.11',
    '1.0.0-rc.1',
    '1.0.0',
    '1.2.0-rc.2',
    '1.2.0-rc.10',
    '1.2.0',
    '1.9.0',
    '1.10.0',
    '2.0.0',
  ];
  for (let i = 0; i < ordered.length; i += 1) {
    for (let j = 0; j < ordered.length; j += 1) {
      assert.equal(compareVersions(ordered[i]!, ordered[j]!), Math.sign(i - j), `${ordered[i]} vs ${ordered[j]}`);
    }
  }
});

test('what is not a release version is refused, not ordered', T, () => {
  for (const bad of ['1.0', '01.0.0', '1.0.0-', '1.0.0-a..b', 'v1.0.0', '1.0.0 ']) {
    assert.equal(isReleaseVersion(bad), false, bad);
    assert.throws(() => compareVersions(bad, '1.0.0'), RangeError);
  }
});
