import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpuMounts } from '../../bench/support/cgroup.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const T = { timeout: TEST_DEADLINE_MS };

const HYBRID = [
  'tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0',
  'cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0',
  'cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0',
  'cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0',
  'cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0',
].join('\n');

test(
  'a hybrid system: the v2 hierarchy has no cpu controller, so the v1 cpu mount is used (not cpuacct or cpuset)',
  T,
  () => {
    assert.deepEqual(
      cpuMounts(HYBRID, () => 'hugetlb\n'),
      [{ kind: 'v1', path: '/sys/fs/cgroup/cpu' }],
    );
  },
);

test('a v2 hierarchy that offers cpu comes first', T, () => {
  const text = `${HYBRID}\ncgroup2 /sys/fs/cgroup2 cgroup2 rw 0 0`;
  const controllers = (p: string) => (p === '/sys/fs/cgroup2' ? 'cpuset cpu io memory pids\n' : null);
  assert.deepEqual(cpuMounts(text, controllers), [
    { kind: 'v2', path: '/sys/fs/cgroup2' },
    { kind: 'v1', path: '/sys/fs/cgroup/cpu' },
  ]);
});

test('no cgroup mounts at all: nothing to use', T, () => {
  assert.deepEqual(
    cpuMounts('proc /proc proc rw 0 0\n', () => 'cpu'),
    [],
  );
});
