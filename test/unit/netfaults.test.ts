import { describe, expect, it } from 'vitest';
import type { Docker } from '../../src/cluster/docker/engine.js';
import {
  type HostRunner,
  linkNames,
  netemArgs,
  ourRootQdisc,
  tbfArgs,
  netFaultsUnavailable,
  ourRules,
  partitionRules,
  RULE_COMMENT,
  rulesLeft,
} from '../../src/cluster/docker/netns.js';
import { netemFrom, percent } from '../../src/cli/options.js';
import { UsageError } from '../../src/errors.js';

describe('partitionRules: both directions, tagged', () => {
  it('drops what comes from the peer and what goes to it', () => {
    expect(partitionRules('172.18.0.3')).toEqual([
      ['INPUT', '-s', '172.18.0.3', '-m', 'comment', '--comment', RULE_COMMENT, '-j', 'DROP'],
      ['OUTPUT', '-d', '172.18.0.3', '-m', 'comment', '--comment', RULE_COMMENT, '-j', 'DROP'],
    ]);
  });
});

describe('netemArgs', () => {
  it.each([
    [{ delayMs: 200, jitterMs: 0, lossPct: 0 }, ['netem', 'delay', '200ms']],
    [{ delayMs: 200, jitterMs: 50, lossPct: 0 }, ['netem', 'delay', '200ms', '50ms']],
    [{ delayMs: 100, jitterMs: 0, lossPct: 5 }, ['netem', 'delay', '100ms', 'loss', '5%']],
    [{ delayMs: 0, jitterMs: 0, lossPct: 2.5 }, ['netem', 'delay', '0ms', 'loss', '2.5%']],
  ])('%o → %o', (spec, args) => {
    expect(netemArgs(spec)).toEqual(args);
  });
});

describe('ourRules: what iptables -S lists of ours, ready for -D', () => {
  const listing = [
    '-P INPUT ACCEPT',
    '-P FORWARD ACCEPT',
    '-P OUTPUT ACCEPT',
    '-A INPUT -s 172.18.0.3/32 -m comment --comment rmq-bench -j DROP',
    '-A INPUT -s 10.0.0.9/32 -m comment --comment "someone else" -j DROP',
    '-A OUTPUT -d 172.18.0.3/32 -m comment --comment rmq-bench -j DROP',
    '-A OUTPUT -d 172.18.0.4/32 -j DROP',
  ].join('\n');
  it('keeps only rules with our comment, never anyone else’s', () => {
    expect(ourRules(listing)).toEqual([
      ['INPUT', '-s', '172.18.0.3/32', '-m', 'comment', '--comment', 'rmq-bench', '-j', 'DROP'],
      ['OUTPUT', '-d', '172.18.0.3/32', '-m', 'comment', '--comment', 'rmq-bench', '-j', 'DROP'],
    ]);
  });
  it('an empty table has none', () => {
    expect(ourRules('-P INPUT ACCEPT\n-P OUTPUT ACCEPT\n')).toEqual([]);
  });
});

describe('rulesLeft: the rules an undo removed that iptables -S still lists', () => {
  const [in3, out3] = partitionRules('172.18.0.3') as [string[], string[]];
  const [in4] = partitionRules('172.18.0.4') as [string[], string[]];
  const listing = (...lines: string[]): string => ['-P INPUT ACCEPT', '-P OUTPUT ACCEPT', ...lines].join('\n');
  it.each([
    ['all removed', listing(), [in3, out3], []],
    ['one left, listed with /32', listing(`-A INPUT -s 172.18.0.3/32 -m comment --comment ${RULE_COMMENT} -j DROP`), [in3, out3], [in3]],
    [
      "a rule of another fault (another peer) is not this undo's",
      listing(`-A INPUT -s 172.18.0.4/32 -m comment --comment ${RULE_COMMENT} -j DROP`),
      [in3, out3],
      [],
    ],
    ['a rule without our comment is never ours', listing('-A INPUT -s 172.18.0.3/32 -j DROP'), [in3], []],
    ['the other peer left', listing(`-A INPUT -s 172.18.0.4/32 -m comment --comment ${RULE_COMMENT} -j DROP`), [in3, in4], [in4]],
  ])('%s', (_, printed, removed, left) => {
    expect(rulesLeft(removed, printed)).toEqual(left);
  });
});

describe('linkNames and ourRootQdisc', () => {
  it('every interface but loopback, without the @peer suffix', () => {
    const ip = [
      '1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN mode DEFAULT group default qlen 1000\\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00',
      '42: eth0@if43: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT group default \\    link/ether 02:42:ac:12:00:02 brd ff:ff:ff:ff:ff:ff link-netnsid 0',
      '44: eth1@if45: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP',
    ].join('\n');
    expect(linkNames(ip)).toEqual(['eth0', 'eth1']);
  });
  it.each([
    ['qdisc netem 8001: root refcnt 2 limit 1000 delay 200ms', 'netem'],
    ['qdisc tbf 8002: root refcnt 2 rate 256Kbit burst 4Kb lat 400ms', 'tbf'],
    ['qdisc noqueue 0: root refcnt 2', null],
    ['qdisc tbf 10: parent 1:1 rate 1Mbit', null],
    ['', null],
  ])('%s → %s', (show, expected) => {
    expect(ourRootQdisc(show)).toBe(expected);
  });
  it('tbf: the rate given, a burst of at least a full frame, a bounded queue', () => {
    expect(tbfArgs('256kbit')).toEqual(['tbf', 'rate', '256kbit', 'burst', '32kbit', 'latency', '400ms']);
  });
});

describe('--latency, --jitter, --loss', () => {
  it.each([
    ['latency', {}, { delayMs: 200, jitterMs: 0, lossPct: 0 }],
    ['latency', { latency: 500, loss: 5 }, { delayMs: 500, jitterMs: 0, lossPct: 5 }],
    ['latency', { jitter: 20 }, { delayMs: 200, jitterMs: 20, lossPct: 0 }],
    ['kill', {}, undefined],
  ] as const)('--fault %s %o → %o', (fault, o, expected) => {
    expect(netemFrom(fault, o)).toEqual(expected);
  });
  it.each([
    ['kill', { latency: 200 }, "--latency goes with --fault latency (not 'kill')"],
    ['partition', { loss: 5 }, "--loss goes with --fault latency (not 'partition')"],
  ] as const)('with --fault %s they are a usage error', (fault, o, message) => {
    expect(() => netemFrom(fault, o)).toThrow(UsageError);
    expect(() => netemFrom(fault, o)).toThrow(message);
  });
  it.each([
    ['5%', 5],
    ['5', 5],
    ['0.5%', 0.5],
    ['100%', 100],
  ])('percent(%s) = %s', (v, n) => {
    expect(percent(v)).toBe(n);
  });
  it.each(['', '101%', '-1', 'five', '5%%'])('percent(%s) is refused', (v) => {
    expect(() => percent(v)).toThrow(/not a percentage/);
  });
});

describe('netFaultsUnavailable: one line saying why, or null', () => {
  const docker = { getContainer: () => ({ inspect: async () => ({ State: { Running: true, Pid: 4242, Status: 'running' } }) }) } as unknown as Docker;
  /** A host runner where the named tools exist and tc either knows netem or not. */
  const runner =
    (tools: string[], netem: boolean): HostRunner =>
    async (file, args) => {
      if (file === 'sh') return { exitCode: tools.some((t) => args[1] === `command -v ${t}`) ? 0 : 1, output: '' };
      if (file === 'nsenter' && args.includes('add'))
        return netem ? { exitCode: 0, output: '' } : { exitCode: 2, output: 'Error: Specified qdisc kind is unknown.' };
      return { exitCode: 0, output: '' };
    };
  const all = ['nsenter', 'iptables', 'tc', 'ip'];
  const linuxRoot = { platform: 'linux' as const, uid: 0, netnsVisible: async (): Promise<boolean> => true };
  it.each([
    ['partition', { ...linuxRoot, platform: 'darwin' as const }, all, true, "'partition' needs Linux with a local Docker engine"],
    ['partition', { ...linuxRoot, uid: 1000 }, all, true, "'partition' needs root on the host"],
    ['partition', linuxRoot, ['nsenter', 'tc', 'ip'], true, "'partition' needs 'iptables' on the host"],
    ['partition', { ...linuxRoot, netnsVisible: async (): Promise<boolean> => false }, all, true, "'partition' needs the containers' processes on this host"],
    ['latency', linuxRoot, all, false, "'latency' needs the kernel's netem queueing discipline"],
  ] as const)('%s on %o (tools %o, netem %s): refused', async (kind, host, tools, netem, line) => {
    const why = await netFaultsUnavailable(docker, 'rabbit1', runner([...tools], netem), kind, kind === 'latency' ? 'netem' : null, host);
    expect(why).toContain(line);
    expect(why).toMatch(/still work$/);
    expect(why).not.toContain('\n');
  });
  it.each([
    ['partition', false],
    ['latency', true],
  ] as const)('%s where everything is there (netem %s): null', async (kind, netem) => {
    expect(await netFaultsUnavailable(docker, 'rabbit1', runner(all, netem), kind, kind === 'latency' ? 'netem' : null, linuxRoot)).toBeNull();
  });
});
