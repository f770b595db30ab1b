import { describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/cluster/image.js';

const status = `${[
  [
    'Package: erlang-base',
    'Status: install ok installed',
    'Architecture: amd64',
    'Version: 1:27.3.4.1+dfsg-1',
    'Description: Erlang/OTP virtual machine and base applications',
  ].join('\n'),
  ['Package: rabbitmq-server-doc', 'Status: install ok installed', 'Version: 9.9.9-1'].join('\n'),
  [
    'Package: rabbitmq-server',
    'Status: install ok installed',
    'Priority: optional',
    'Architecture: all',
    'Version: 4.3.6-1',
    'Depends: adduser, erlang-base',
  ].join('\n'),
  ['Package: docker.io', 'Status: install ok installed', 'Version: 1:29.1.2+dfsg-1'].join('\n'),
  ['Package: libstdc++6', 'Status: install ok installed', 'Version: 14.2.0-19'].join('\n'),
  ['Package: procps', 'Status: install ok installed', 'Version: 2:4.0.4'].join('\n'),
  ['Package: dockerXio', 'Version: 0.0.1-1'].join('\n'),
].join('\n\n')}\n`;

describe('packageVersion', () => {
  const cases: { pkg: string; expected: string | undefined; why: string }[] = [
    { pkg: 'rabbitmq-server', expected: '4.3.6', why: 'Debian revision dropped' },
    { pkg: 'erlang-base', expected: '27.3.4.1+dfsg', why: 'epoch and revision dropped' },
    { pkg: 'docker.io', expected: '29.1.2+dfsg', why: 'epoch 1: dropped; the dot matches only a dot' },
    { pkg: 'libstdc++6', expected: '14.2.0', why: 'plus signs in the name are literal' },
    { pkg: 'procps', expected: '4.0.4', why: 'epoch without revision' },
    { pkg: 'rabbitmq', expected: undefined, why: 'a prefix of a name does not match' },
    { pkg: 'erlang', expected: undefined, why: 'missing package' },
  ];

  it.each(cases)('$pkg → $expected ($why)', ({ pkg, expected }) => {
    expect(packageVersion(status, pkg)).toBe(expected);
  });

  it('a stanza without Version gives undefined', () => {
    expect(packageVersion('Package: rabbitmq-server\nStatus: deinstall ok config-files\n', 'rabbitmq-server')).toBeUndefined();
  });

  it('an empty status file gives undefined', () => {
    expect(packageVersion('', 'rabbitmq-server')).toBeUndefined();
  });
});
