/**
 * The release checker's rules on small fixtures: ELF headers made byte by byte, control fields
 * and file lists as dpkg-deb prints them. No package is built here (that is `npm run release`).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readElfIdentity } from '../../release/elf.js';
import {
  debProblems,
  elfProblems,
  parseContents,
  parseControl,
  tarballTarget,
  treeProblems,
  requiredFiles,
  type DebFacts,
} from '../../release/check.js';
import { DEB_DEPENDS, ELF_MACHINE, TARGETS } from '../../release/targets.js';

/** The first 20 bytes of an ELF file: e_ident (16 bytes), e_type (2), e_machine (2). */
function elfHead(cls: 1 | 2, data: 1 | 2, machine: number, type = 3): Uint8Array {
  const b = new Uint8Array(20);
  b.set([0x7f, 0x45, 0x4c, 0x46]); // magic: 0x7f 'E' 'L' 'F'
  b[4] = cls; //                      EI_CLASS: 1 = 32-bit, 2 = 64-bit
  b[5] = data; //                     EI_DATA: 1 = little-endian, 2 = big-endian
  b[6] = 1; //                        EI_VERSION
  const view = new DataView(b.buffer);
  view.setUint16(16, type, data === 1); // e_type: 2 executable, 3 shared object (.node, PIE)
  view.setUint16(18, machine, data === 1); // e_machine
  return b;
}

const AARCH64_SO = elfHead(2, 1, ELF_MACHINE.aarch64);
const X86_64_SO = elfHead(2, 1, ELF_MACHINE.x86_64);
const ARM32_EXE = elfHead(1, 1, ELF_MACHINE.arm, 2);

test(
  'readElfIdentity reads class, byte order, type and machine; non-ELF is null; a bad header is an error',
  { timeout: 5_000 },
  () => {
    assert.deepEqual(readElfIdentity(AARCH64_SO), { elfClass: 64, littleEndian: true, type: 3, machine: 183 });
    assert.deepEqual(readElfIdentity(ARM32_EXE), { elfClass: 32, littleEndian: true, type: 2, machine: 40 });
    // Big-endian fields are read as big-endian (s390x = 22).
    assert.deepEqual(readElfIdentity(elfHead(2, 2, 22)), { elfClass: 64, littleEndian: false, type: 3, machine: 22 });
    assert.equal(readElfIdentity(new TextEncoder().encode('#!/bin/sh\necho not elf\n')), null);
    assert.equal(readElfIdentity(new Uint8Array(0)), null);
    assert.throws(() => readElfIdentity(AARCH64_SO.subarray(0, 10)), /truncated \(10 of 20 bytes\)/);
    const badClass = AARCH64_SO.slice();
    badClass[4] = 7;
    assert.throws(() => readElfIdentity(badClass), /class byte 7/);
  },
);

test(
  'elfProblems: an arm64 package takes only 64-bit aarch64 ELF files and names every x86 one',
  { timeout: 5_000 },
  () => {
    const script = { path: 'opt/qrvend/bin/qrvend', head: new TextEncoder().encode('#!/bin/sh\n') };
    const ok = [
      { path: 'opt/qrvend/node/bin/node', head: elfHead(2, 1, ELF_MACHINE.aarch64, 2) },
      { path: 'a.node', head: AARCH64_SO },
      script,
    ];
    assert.deepEqual(elfProblems(ok, TARGETS.arm64), []);

    const mixed = [...ok, { path: 'opt/qrvend/node_modules/x/prebuilds/linux-x64/x.node', head: X86_64_SO }];
    const problems = elfProblems(mixed, TARGETS.arm64);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /linux-x64\/x\.node: ELF for x86-64 \(64-bit\), package is arm64 \(aarch64, 64-bit\)/);

    // armhf: 32-bit arm only; a 64-bit aarch64 file is wrong there, and vice versa.
    assert.deepEqual(elfProblems([{ path: 'node', head: ARM32_EXE }], TARGETS.armhf), []);
    assert.equal(elfProblems([{ path: 'node', head: AARCH64_SO }], TARGETS.armhf).length, 1);
    assert.equal(elfProblems([{ path: 'node', head: ARM32_EXE }], TARGETS.arm64).length, 1);
    // amd64 refuses arm.
    assert.equal(
      elfProblems(
        [
          { path: 'node', head: X86_64_SO },
          { path: 'b.node', head: AARCH64_SO },
        ],
        TARGETS.amd64,
      ).length,
      1,
    );
    // No ELF at all means Node is missing; a truncated ELF is reported with its path.
    assert.match(elfProblems([script], TARGETS.arm64)[0]!, /no ELF file at all/);
    assert.match(
      elfProblems([{ path: 'cut.node', head: AARCH64_SO.subarray(0, 8) }, ...ok], TARGETS.arm64)[0]!,
      /^cut\.node: ELF header truncated/,
    );
  },
);

/** Control fields and listing as `dpkg-deb --field` and `dpkg-deb --contents` print them. */
const FIELDS = `Package: qrvend
Version: 0.1.0
Architecture: arm64
Depends: ${DEB_DEPENDS}
Description: QR-payment agent for vending machines
 An MDB cashless reader.
`;
const LISTING = [
  'drwxr-xr-x root/root         0 2026-11-23 01:14 ./',
  '-rw-r--r-- root/root       378 2026-11-23 01:14 ./etc/qrvend/config.json',
  '-rw-r--r-- root/root       301 2026-11-23 01:14 ./etc/needrestart/conf.d/qrvend.conf',
  ...requiredFiles('0.1.0').map((f) => `-rwxr-xr-x root/root      1431 2026-11-23 01:14 ./${f}`),
  'lrwxrwxrwx root/root         0 2026-11-23 01:14 ./usr/bin/qrvend -> /opt/qrvend/bin/qrvend',
].join('\n');

function facts(overrides: Partial<DebFacts> = {}): DebFacts {
  return {
    fields: parseControl(FIELDS),
    conffiles: ['/etc/qrvend/config.json', '/etc/needrestart/conf.d/qrvend.conf'],
    controlMembers: ['control', 'conffiles', 'preinst', 'postinst', 'prerm', 'postrm'],
    paths: parseContents(LISTING),
    ...overrides,
  };
}

test(
  'parseControl and parseContents read what dpkg-deb prints, symlinks and continuation lines included',
  { timeout: 5_000 },
  () => {
    const fields = parseControl(FIELDS);
    assert.equal(fields.Architecture, 'arm64');
    assert.equal(fields.Description, 'QR-payment agent for vending machines\nAn MDB cashless reader.');
    const paths = parseContents(LISTING);
    assert.ok(paths.includes('usr/bin/qrvend'));
    assert.ok(paths.includes('etc/qrvend/config.json'));
    assert.ok(!paths.includes(''), 'the root entry ./ is not a path');
  },
);

test('debProblems: a well-formed package passes; each broken promise is named', { timeout: 5_000 }, () => {
  const name = 'qrvend_0.1.0_arm64.deb';
  assert.deepEqual(debProblems(facts(), name), []);

  const withNode = facts({ fields: { ...parseControl(FIELDS), Depends: 'nodejs (>= 20), systemd' } });
  const p1 = debProblems(withNode, name);
  assert.ok(p1.some((p) => /Depends is 'nodejs/.test(p)));
  assert.ok(p1.some((p) => /depends on nodejs: Node is bundled/.test(p)));

  assert.ok(
    debProblems(facts({ conffiles: [] }), name).some((p) =>
      /conffiles does not list \/etc\/qrvend\/config\.json/.test(p),
    ),
  );
  assert.ok(
    debProblems(facts({ conffiles: ['/etc/qrvend/config.json', '/etc/qrvend/other'] }), name).some((p) =>
      /conffile \/etc\/qrvend\/other is not in the package/.test(p),
    ),
  );
  assert.ok(
    debProblems(facts({ controlMembers: ['control', 'conffiles', 'postinst', 'prerm'] }), name).some((p) =>
      /postrm is missing/.test(p),
    ),
  );
  // The previous release is kept by preinst; a stock needrestart is told to leave the agent alone.
  assert.ok(
    debProblems(facts({ controlMembers: ['control', 'conffiles', 'postinst', 'prerm', 'postrm'] }), name).some((p) =>
      /preinst is missing/.test(p),
    ),
  );
  assert.ok(
    debProblems(facts({ conffiles: ['/etc/qrvend/config.json'] }), name).some((p) =>
      /conffiles does not list \/etc\/needrestart\/conf\.d\/qrvend\.conf/.test(p),
    ),
  );
  assert.ok(
    debProblems(facts(), 'qrvend_0.1.0_amd64.deb').some((p) => /its fields say qrvend_0\.1\.0_arm64\.deb/.test(p)),
  );
  const secret = facts({ paths: [...parseContents(LISTING), 'etc/qrvend/secret-token'] });
  assert.ok(debProblems(secret, name).some((p) => /secret-token/.test(p)));
  assert.deepEqual(debProblems(facts({ fields: { ...parseControl(FIELDS), Architecture: 'i386' } }), name), [
    "Architecture 'i386' is not a release architecture",
  ]);
});

test(
  'debProblems: the armhf package also depends on libatomic1 (its Node links libatomic.so.1), the others do not',
  { timeout: 5_000 },
  () => {
    const armhf = (depends: string) =>
      facts({ fields: { ...parseControl(FIELDS), Architecture: 'armhf', Depends: depends } });
    assert.deepEqual(debProblems(armhf(`libatomic1, ${DEB_DEPENDS}`), 'qrvend_0.1.0_armhf.deb'), []);
    assert.ok(
      debProblems(armhf(DEB_DEPENDS), 'qrvend_0.1.0_armhf.deb').some((p) => /expected 'libatomic1, libc6/.test(p)),
    );
    assert.ok(
      debProblems(
        facts({ fields: { ...parseControl(FIELDS), Depends: `libatomic1, ${DEB_DEPENDS}` } }),
        'qrvend_0.1.0_arm64.deb',
      ).length > 0,
    );
  },
);

test(
  "treeProblems and tarballTarget: required files in the release's own tree, nothing else " +
    'in /opt/qrvend, no development dependencies or tests, version and arch from the name',
  { timeout: 5_000 },
  () => {
    const paths = parseContents(LISTING);
    assert.deepEqual(treeProblems(paths, '0.1.0'), []);
    const node = 'opt/qrvend/releases/0.1.0/node/bin/node';
    assert.ok(paths.includes(node));
    assert.ok(
      treeProblems(
        paths.filter((p) => p !== node),
        '0.1.0',
      ).some((p) => p === `${node} is missing`),
    );
    // The tree of another version is not this release's.
    assert.ok(treeProblems(paths, '0.2.0').some((p) => p === 'opt/qrvend/releases/0.2.0/bin/qrvend is missing'));
    assert.ok(
      treeProblems(
        paths.filter((p) => p !== 'opt/qrvend/bin/qrvend-release'),
        '0.1.0',
      ).some((p) => /qrvend-release is missing/.test(p)),
    );
    // The flat layout of before: a release's files directly under /opt/qrvend.
    assert.ok(
      treeProblems([...paths, 'opt/qrvend/dist/src/cli/main.js'], '0.1.0').some((p) =>
        /^opt\/qrvend\/dist\/src\/cli\/main\.js: outside opt\/qrvend\/releases\/0\.1\.0\//.test(p),
      ),
    );
    assert.deepEqual(
      treeProblems(
        [
          ...paths,
          'opt/qrvend',
          'opt/qrvend/bin',
          'opt/qrvend/releases',
          'opt/qrvend/releases/0.1.0',
          'opt/qrvend/current',
        ],
        '0.1.0',
      ),
      [],
    );
    assert.ok(
      treeProblems([...paths, 'opt/qrvend/releases/0.1.0/node_modules/typescript/lib/tsc.js'], '0.1.0').some((p) =>
        /development dependency/.test(p),
      ),
    );
    assert.ok(
      treeProblems([...paths, 'opt/qrvend/releases/0.1.0/dist/test/x.test.js'], '0.1.0').some((p) =>
        /tests are shipped/.test(p),
      ),
    );
    assert.deepEqual(tarballTarget('qrvend_0.1.0_armhf.tar.gz'), { target: TARGETS.armhf, version: '0.1.0' });
    assert.deepEqual(tarballTarget('qrvend_0.2.0-rc.1_arm64.tar.gz'), { target: TARGETS.arm64, version: '0.2.0-rc.1' });
    assert.equal(tarballTarget('qrvend_0.1.0_x64.tar.gz'), null);
    assert.equal(tarballTarget('qrvend-0.1.0-linux-armhf.tar.gz'), null);
    assert.equal(tarballTarget('other.tar.gz'), null);
  },
);

test(
  'treeProblems: no rig and no development-only package in a release (the lockfile says which packages are dev-only)',
  { timeout: 5_000 },
  () => {
    const paths = parseContents(LISTING);
    const rel = 'opt/qrvend/releases/0.1.0';
    // A rig (the chaos run, a broker wrapper) compiled under dist/rigs: built for tests and benches only.
    assert.ok(
      treeProblems([...paths, `${rel}/dist/rigs/chaos/run.js`], '0.1.0').some((p) => /rigs are shipped/.test(p)),
    );
    // aedes (the in-process broker of the tests) and the mutation runner: dev-only in package-lock.json.
    for (const pkg of ['aedes', '@stryker-mutator/core', 'fast-check']) {
      const shipped = [...paths, `${rel}/node_modules/${pkg}/package.json`];
      assert.ok(
        treeProblems(shipped, '0.1.0').some(
          (p) => p.includes(`node_modules/${pkg}`) && /development dependency/.test(p),
        ),
        pkg,
      );
    }
    // mqtt-packet is a devDependency too, but mqtt needs it at run time: not dev-only, so it ships.
    assert.deepEqual(treeProblems([...paths, `${rel}/node_modules/mqtt-packet/package.json`], '0.1.0'), []);
  },
);
