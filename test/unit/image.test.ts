import { describe, expect, it } from 'vitest';
import { appDependencies, BUILT_IMAGE_REVISION, builtImageStale, packageVersion, parseEnabledPlugins, pluginClosure } from '../../src/cluster/docker/image.js';

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

describe('parseEnabledPlugins', () => {
  const cases: { text: string; expected: string[]; why: string }[] = [
    { text: '[rabbitmq_management,rabbitmq_prometheus].\n', expected: ['rabbitmq_management', 'rabbitmq_prometheus'], why: 'the file as shipped' },
    {
      text: "% enabled here\n[ rabbitmq_management ,\n  'rabbitmq_shovel' ].",
      expected: ['rabbitmq_management', 'rabbitmq_shovel'],
      why: 'comments, spaces, a quoted atom',
    },
    { text: '[].', expected: [], why: 'none enabled' },
    { text: '', expected: [], why: 'an empty file' },
  ];
  it.each(cases)('$why', ({ text, expected }) => {
    expect(parseEnabledPlugins(text)).toEqual(expected);
  });
});

describe('appDependencies', () => {
  const app = [
    "{application, 'rabbitmq_management', [",
    '\t{description, "RabbitMQ Management Console, 100% web"},',
    "\t{modules, ['rabbit_mgmt_app','rabbit_mgmt_db']},",
    "\t{applications, [kernel,stdlib,rabbit_common,rabbit,'amqp_client',cowboy]},",
    '\t{included_applications, [inner]},',
    '\t{optional_applications, [oauth2_client]},',
    '\t{env, [{listener, []}]}',
    ']}.',
  ].join('\n');
  const cases: { text: string; expected: string[]; why: string }[] = [
    {
      text: app,
      expected: ['kernel', 'stdlib', 'rabbit_common', 'rabbit', 'amqp_client', 'cowboy', 'inner', 'oauth2_client'],
      why: 'applications, included and optional; a % inside a string cuts nothing',
    },
    {
      text: '{application, aten, [{applications, [kernel, stdlib]}, {included_applications, []}]}.',
      expected: ['kernel', 'stdlib'],
      why: 'an empty included list',
    },
    { text: '{application, x, [{vsn, "1"}]}.', expected: [], why: 'no dependencies listed' },
  ];
  it.each(cases)('$why', ({ text, expected }) => {
    expect(appDependencies(text)).toEqual(expected);
  });
});

describe('pluginClosure', () => {
  const apps = new Map<string, string[]>([
    ['rabbit', ['kernel', 'rabbit_common', 'ra']],
    ['rabbit_common', ['kernel', 'recon']],
    ['ra', ['aten', 'rabbit']],
    ['aten', []],
    ['recon', []],
    ['rabbitmq_prelaunch', ['rabbit_common']],
    ['rabbitmq_management', ['rabbit', 'cowboy']],
    ['cowboy', ['ranch']],
    ['ranch', []],
    ['rabbitmq_shovel', ['amqp_client']],
    ['amqp_client', ['rabbit_common']],
  ]);
  const cases: { roots: string[]; keep: string[]; missing: string[]; why: string }[] = [
    {
      roots: ['rabbit'],
      keep: ['aten', 'ra', 'rabbit', 'rabbit_common', 'recon'],
      missing: [],
      why: 'transitive, a cycle (ra ↔ rabbit) followed once, OTP apps left out',
    },
    {
      roots: ['rabbit', 'rabbitmq_prelaunch', 'rabbitmq_management'],
      keep: ['aten', 'cowboy', 'ra', 'rabbit', 'rabbit_common', 'rabbitmq_management', 'rabbitmq_prelaunch', 'ranch', 'recon'],
      missing: [],
      why: 'the shovel and amqp_client go: nothing enabled needs them',
    },
    {
      roots: ['rabbit', 'rabbitmq_mqtt'],
      keep: ['aten', 'ra', 'rabbit', 'rabbit_common', 'recon'],
      missing: ['rabbitmq_mqtt'],
      why: 'a root the package lacks is missing',
    },
    { roots: [], keep: [], missing: [], why: 'no roots, nothing kept' },
  ];
  it.each(cases)('$why', ({ roots, keep, missing }) => {
    expect(pluginClosure(apps, roots)).toEqual({ keep, missing });
  });
});

describe('builtImageStale', () => {
  const fresh = { 'rmq-bench.build': String(BUILT_IMAGE_REVISION), 'rmq-bench.plugins': 'rabbit,rabbitmq_management,rabbitmq_prometheus' };
  const cases: { labels: Record<string, string>; enabled: string[]; expected: RegExp | undefined; why: string }[] = [
    { labels: {}, enabled: ['rabbitmq_management'], expected: /older rmq-bench \(build 1, with every plugin\)/, why: 'the first builds had no label' },
    { labels: { 'rmq-bench.build': '1' }, enabled: [], expected: /older rmq-bench/, why: 'build 1' },
    { labels: { 'rmq-bench.build': 'x' }, enabled: [], expected: /older rmq-bench/, why: 'a label that is not a number' },
    { labels: fresh, enabled: ['rabbitmq_management', 'rabbitmq_prometheus'], expected: undefined, why: 'this build, every enabled plugin in it' },
    { labels: { ...fresh, 'rmq-bench.build': String(BUILT_IMAGE_REVISION + 1) }, enabled: [], expected: undefined, why: 'a newer build is used' },
    { labels: fresh, enabled: ['rabbitmq_management', 'rabbitmq_shovel'], expected: /lacks rabbitmq_shovel/, why: 'a plugin enabled since the build' },
  ];
  it.each(cases)('$why', ({ labels, enabled, expected }) => {
    const why = builtImageStale(labels, enabled);
    if (expected === undefined) expect(why).toBeUndefined();
    else expect(why).toMatch(expected);
  });
});
