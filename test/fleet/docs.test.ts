import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = (path: string) => readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8');

test(
  'the ACL shown in docs/fleet-operations.md is the file the ACL test loads into mosquitto',
  { timeout: 5_000 },
  () => {
    const guide = root('docs/fleet-operations.md');
    const m = /<!-- acl:start[^>]*-->\n```\n([\s\S]*?)```\n<!-- acl:end -->/.exec(guide);
    assert.ok(m, 'the guide marks the ACL with acl:start / acl:end');
    assert.equal(m[1], root('docs/fleet/mosquitto-acl.conf'));
  },
);

test(
  'every line of the site configuration the guide shows is in docs/fleet/mosquitto.conf (which a test runs)',
  { timeout: 5_000 },
  () => {
    const guide = root('docs/fleet-operations.md');
    const conf = new Set(root('docs/fleet/mosquitto.conf').split('\n'));
    const shown = /```\nper_listener_settings false\n([\s\S]*?)```/.exec(guide);
    assert.ok(shown, 'the guide shows the site configuration');
    for (const line of `per_listener_settings false\n${shown[1]}`.split('\n').filter((l) => l.length > 0))
      assert.ok(conf.has(line), `not in mosquitto.conf: ${line}`);
  },
);
