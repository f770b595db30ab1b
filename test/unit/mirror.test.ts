import { describe, expect, it } from 'vitest';
import { debianMirrorFrom } from '../../src/cluster/broker/mirror.js';

type SourceFile = { name: string; text: string };

const deb822 = (...stanzas: string[]): string => `${stanzas.join('\n\n')}\n`;

describe('debianMirrorFrom', () => {
  const cases: { name: string; files: SourceFile[]; expected: string | undefined }[] = [
    {
      name: 'deb822: security archive first, main archive second',
      files: [
        {
          name: 'debian.sources',
          text: deb822(
            'Types: deb\nURIs: http://security.example.org/debian-security\nSuites: trixie-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg',
            'Types: deb\nURIs: http://mirror.example.org/debian\nSuites: trixie trixie-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg',
          ),
        },
      ],
      expected: 'http://mirror.example.org/debian',
    },
    {
      name: 'deb822: a stanza with Types: deb-src only is skipped',
      files: [
        {
          name: 'debian.sources',
          text: deb822(
            'Types: deb-src\nURIs: http://src.example.org/debian\nSuites: trixie\nComponents: main',
            'Types: deb\nURIs: http://mirror.example.org/debian\nSuites: trixie\nComponents: main',
          ),
        },
      ],
      expected: 'http://mirror.example.org/debian',
    },
    {
      name: 'deb822: Types: deb deb-src counts',
      files: [{ name: 'debian.sources', text: 'Types: deb deb-src\nURIs: https://mirror.example.org/debian/\nSuites: trixie\nComponents: main\n' }],
      expected: 'https://mirror.example.org/debian',
    },
    {
      name: 'deb822: Enabled: no is skipped',
      files: [
        {
          name: 'debian.sources',
          text: deb822(
            'Types: deb\nURIs: http://disabled.example.org/debian\nSuites: trixie\nComponents: main\nEnabled: no',
            '# the one in use\nTypes: deb\nURIs: http://mirror.example.org/debian\nSuites: trixie\nComponents: main\nEnabled: yes',
          ),
        },
      ],
      expected: 'http://mirror.example.org/debian',
    },
    {
      name: 'deb822: stanzas separated by a whitespace-only line',
      files: [
        {
          name: 'debian.sources',
          text: 'Types: deb\nURIs: http://security.example.org/debian-security\nSuites: trixie-security\nComponents: main\n   \nTypes: deb\nURIs: http://mirror.example.org/debian\nSuites: trixie\nComponents: main\n',
        },
      ],
      expected: 'http://mirror.example.org/debian',
    },
    {
      name: 'deb822: the first main archive of several URIs',
      files: [
        {
          name: 'debian.sources',
          text: 'Types: deb\nURIs: cdrom:/media/ http://one.example.org/debian http://two.example.org/debian\nSuites: trixie\nComponents: main\n',
        },
      ],
      expected: 'http://one.example.org/debian',
    },
    {
      name: 'one-line .list with [signed-by=...] options and comments',
      files: [
        {
          name: 'sources.list',
          text: [
            '# deb http://commented.example.org/debian bookworm main',
            'deb-src http://src.example.org/debian bookworm main',
            'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg arch=amd64] http://mirror.example.org/debian bookworm main contrib # the main archive',
            'deb http://security.example.org/debian-security bookworm-security main',
          ].join('\n'),
        },
      ],
      expected: 'http://mirror.example.org/debian',
    },
    {
      name: 'one-line .list: security line first',
      files: [
        {
          name: 'sources.list',
          text: 'deb http://security.example.org/debian-security bookworm-security main\n  deb   http://mirror.example.org/debian/   bookworm main\n',
        },
      ],
      expected: 'http://mirror.example.org/debian',
    },
    {
      name: 'the first file with a main archive wins',
      files: [
        { name: 'sources.list', text: '# See sources.list.d/debian.sources\n' },
        { name: 'backports.list', text: 'deb http://first.example.org/debian bookworm-backports main\n' },
        { name: 'debian.sources', text: 'Types: deb\nURIs: http://mirror.example.org/debian\nSuites: bookworm\nComponents: main\n' },
      ],
      expected: 'http://first.example.org/debian',
    },
    {
      // Files come in sorted order (hostDebianMirror); add-apt-repository's names sort before debian.sources.
      name: 'a third-party repository under …/linux/debian is not the Debian archive',
      files: [
        { name: 'sources.list', text: '# See sources.list.d/debian.sources\n' },
        {
          name: 'archive_uri-https_packages_example_org_linux_debian-bookworm.list',
          text: 'deb [arch=amd64 signed-by=/etc/apt/keyrings/vendor.asc] https://packages.example.org/linux/debian bookworm stable\n',
        },
        { name: 'debian.sources', text: 'Types: deb\nURIs: http://mirror.example.org/debian\nSuites: bookworm\nComponents: main\n' },
      ],
      expected: 'http://mirror.example.org/debian',
    },
    {
      name: 'a deb822 text in a .list file is not read as deb822',
      files: [{ name: 'debian.list', text: 'Types: deb\nURIs: http://mirror.example.org/debian\nSuites: trixie\n' }],
      expected: undefined,
    },
    {
      name: 'only security, source and non-Debian archives: nothing found',
      files: [
        {
          name: 'sources.list',
          text: 'deb http://security.example.org/debian-security bookworm-security main\ndeb-src http://mirror.example.org/debian bookworm main\n',
        },
        { name: 'ubuntu.sources', text: 'Types: deb\nURIs: http://archive.example.org/ubuntu\nSuites: noble\n' },
        { name: 'off.sources', text: 'Types: deb\nURIs: http://mirror.example.org/debian\nSuites: trixie\nEnabled: no\n' },
      ],
      expected: undefined,
    },
    { name: 'no files', files: [], expected: undefined },
    {
      name: 'empty files',
      files: [
        { name: 'sources.list', text: '' },
        { name: 'debian.sources', text: '' },
      ],
      expected: undefined,
    },
  ];

  it.each(cases)('$name', ({ files, expected }) => {
    expect(debianMirrorFrom(files)).toBe(expected);
  });
});
