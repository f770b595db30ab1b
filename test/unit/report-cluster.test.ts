import { describe, expect, it } from 'vitest';
import type { StatusResult } from '../../src/cluster/lifecycle/status.js';
import type { UpResult } from '../../src/cluster/lifecycle/up.js';
import { renderFailover } from '../../src/report/kinds/failover/text.js';
import { renderStatus } from '../../src/report/kinds/cluster-status/text.js';
import { renderUp } from '../../src/report/kinds/cluster-up/text.js';
import { unwrapped } from './fixtures/text.js';
import type { FailoverResult } from '../../src/scenarios/under-faults/failover.js';

const lines = (text: string): string[] => text.split('\n');
const lineStarting = (text: string, start: string): string | undefined => lines(text).find((l) => l.startsWith(start));

const nodes: StatusResult['nodes'] = [
  {
    name: 'rabbit1',
    amqpPort: 5672,
    managementPort: 15672,
    container: 'running',
    health: 'healthy',
    running: true,
    version: '4.3.6',
    erlangVersion: '27.3.4',
    alarms: [],
    partitions: [],
  },
  {
    name: 'rabbit2',
    amqpPort: 5673,
    managementPort: 15673,
    container: 'paused',
    health: 'healthy',
    running: false,
    version: undefined,
    erlangVersion: undefined,
    alarms: [],
    partitions: [],
  },
  {
    name: 'rabbit3',
    amqpPort: 5674,
    managementPort: 15674,
    container: 'running',
    health: 'healthy',
    running: true,
    version: '4.3.6',
    erlangVersion: '27.3.4',
    alarms: ['memory', 'disk'],
    partitions: ['rabbit@rabbit1'],
  },
];
const members = ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'];
const MEMBERS_LEADER = 'rabbit@rabbit3';
/** The default cluster's name and Prometheus port. */
const healthy = { leader: MEMBERS_LEADER, members, stranded: [], outside: [], majority: true };
const where = { cluster: 'rmq-bench', prometheusPort: 15692, mend: null, streamCoordinator: healthy };

describe('renderStatus', () => {
  it('names the cluster and its ports: a second cluster on others', () => {
    const b = nodes.map((n, i) => ({ ...n, name: `rmq-bench-b-rabbit${i + 1}`, amqpPort: 6672 + i, managementPort: 16672 + i }));
    const text = renderStatus({ cluster: 'rmq-bench-b', prometheusPort: 16692, mend: null, streamCoordinator: healthy, reachable: true, nodes: b, queues: [] });
    expect(lines(text)[0]).toBe('cluster rmq-bench-b on 127.0.0.1: AMQP 6672-6674, management 16672-16674, Prometheus 16692');
    expect(lineStarting(text, 'rmq-bench-b-rabbit2 ')).toMatch(/^rmq-bench-b-rabbit2\s+paused\s+/);
  });

  it('lists ports one by one when they are not consecutive, and says where also when no node answers', () => {
    const odd = nodes.map((n, i) => ({ ...n, amqpPort: 7000 + 2 * i, container: 'stopped' as const, running: undefined }));
    const text = renderStatus({ ...where, reachable: false, nodes: odd, queues: [] });
    expect(lines(text)[0]).toBe('cluster rmq-bench on 127.0.0.1: AMQP 7000,7002,7004, management 15672-15674, Prometheus 15692');
  });

  it('reachable: one row per node and per quorum queue, short node names', () => {
    const text = renderStatus({
      ...where,
      reachable: true,
      nodes,
      queues: [
        { name: 'demo.orders', type: 'quorum', leader: 'rabbit@rabbit3', members, online: ['rabbit@rabbit1', 'rabbit@rabbit3'], messages: 42 },
        { name: 'demo.retry', type: 'quorum', leader: undefined, members, online: [], messages: undefined },
      ],
    });
    expect(lines(text)[0]).toBe('cluster rmq-bench on 127.0.0.1: AMQP 5672-5674, management 15672-15674, Prometheus 15692');
    expect(lineStarting(text, 'node ')).toMatch(/^node\s+container\s+health\s+in cluster\s+version\s+erlang\s+alarms\s+partitions$/);
    expect(lineStarting(text, 'rabbit1 ')).toMatch(/^rabbit1\s+running\s+healthy\s+running\s+4\.3\.6\s+27\.3\.4\s+none\s+none$/);
    expect(lineStarting(text, 'rabbit2 ')).toMatch(/^rabbit2\s+paused\s+healthy\s+down\s+-\s+-\s+none\s+none$/);
    expect(lineStarting(text, 'rabbit3 ')).toMatch(/^rabbit3\s+running\s+healthy\s+running\s+4\.3\.6\s+27\.3\.4\s+memory,disk\s+rabbit1$/);
    expect(lineStarting(text, 'quorum queue')).toMatch(/^quorum queue\s+leader\s+members\s+online\s+messages$/);
    expect(lineStarting(text, 'demo.orders')).toMatch(/^demo\.orders\s+rabbit3\s+rabbit1,rabbit2,rabbit3\s+rabbit1,rabbit3\s+42$/);
    expect(lineStarting(text, 'demo.retry')).toMatch(/^demo\.retry\s+none\s+rabbit1,rabbit2,rabbit3\s+-\s+-$/);
    expect(text).not.toContain('rabbit@');
  });

  it("unknown cluster view shows '?'", () => {
    const text = renderStatus({ ...where, reachable: true, nodes: [{ ...nodes[0]!, running: undefined }], queues: [] });
    expect(lineStarting(text, 'rabbit1 ')).toMatch(/^rabbit1\s+running\s+healthy\s+\?\s+/);
  });

  it('reachable without quorum queues', () => {
    const text = renderStatus({ ...where, reachable: true, nodes, queues: [] });
    expect(lines(text).at(-1)).toBe('no quorum queues');
  });

  it('before 4.3, a split and what cluster up does to end it, from the same plan; nothing when whole', () => {
    const text = renderStatus({
      ...where,
      reachable: true,
      nodes,
      queues: [],
      mend: { whole: false, restart: ['rabbit3'], why: 'stale-partition', text: 'rabbit3 lists rabbit1, already restarted: restarting rabbit3' },
    });
    expect(text).toContain("\n\nnot whole: rabbit3 lists rabbit1, already restarted: restarting rabbit3 ('rmq-bench cluster up' does this)\n\n");
    const whole = renderStatus({ ...where, reachable: true, nodes, queues: [], mend: { whole: true, restart: [], why: null, text: 'whole' } });
    expect(whole).not.toContain('not whole');
  });

  it.each([
    [{ stranded: ['rabbit@rabbit1'] }, "its member on rabbit1 never started again after a kill ('rmq-bench cluster up' makes it whole)"],
    [{ outside: ['rabbit@rabbit1'] }, 'the member on rabbit1 runs outside it (its node was forgotten while the coordinator could not record it)'],
    [
      { leader: undefined, stranded: ['rabbit@rabbit1', 'rabbit@rabbit2'], majority: false },
      'its member on rabbit1,rabbit2 never started again after a kill; it has no majority, so no stream can be declared or elect a writer',
    ],
  ])('the stream coordinator: %j named, with what ends it', (over, text) => {
    const out = unwrapped(renderStatus({ ...where, reachable: true, nodes, queues: [], streamCoordinator: { ...healthy, ...over } }));
    expect(out).toContain(`\n\nstream coordinator: ${text}`);
  });

  it('a whole stream coordinator, or none yet: nothing said', () => {
    expect(renderStatus({ ...where, reachable: true, nodes, queues: [] })).not.toContain('stream coordinator');
    const none = { leader: undefined, members: [], stranded: [], outside: [], majority: false };
    expect(renderStatus({ ...where, reachable: true, nodes, queues: [], streamCoordinator: none })).not.toContain('stream coordinator');
  });

  it('unreachable: says so instead of a leader table', () => {
    const down = nodes.map((n) => ({ ...n, container: 'stopped' as const, health: 'none' as const, running: undefined }));
    const text = renderStatus({ ...where, reachable: false, nodes: down, queues: [] });
    expect(lines(text).at(-1)).toBe('no management endpoint answered: queue leaders unknown');
    expect(text).not.toContain('quorum queue');
    expect(lineStarting(text, 'rabbit2 ')).toMatch(/^rabbit2\s+stopped\s+none\s+\?\s+-\s+-\s+none\s+none$/);
  });
});

const failover: FailoverResult = {
  schemaVersion: 1,
  kind: 'failover',
  queue: 'demo.orders',
  queueType: 'quorum',
  vhost: '/',
  fault: 'kill',
  oldLeader: 'rabbit@rabbit2',
  newLeader: 'rabbit@rabbit1',
  alsoFaulted: [],
  shape: null,
  netem: null,
  bandwidth: null,
  membersBefore: members,
  faultAt: '2026-11-29T19:00:00.000Z',
  faultCallMs: 41,
  electionMs: 2_340,
  detectedBy: 'management',
  restored: true,
  downMs: 2_500,
  restoreMs: 800,
  rejoinMs: 14_200,
  membersAfter: members,
  onlineAfter: members,
  leaderAfter: 'rabbit1',
};

describe('renderFailover', () => {
  it('restored: leaders, the election figure, down time and rejoin', () => {
    const text = renderFailover(failover);
    expect(lines(text)).toHaveLength(7);
    expect(lineStarting(text, 'queue ')).toBe('queue          demo.orders');
    expect(lineStarting(text, 'fault ')).toBe('fault          kill: SIGKILL the container (a crash: no clean shutdown); the call took 41 ms');
    expect(lineStarting(text, 'old leader')).toBe('old leader     rabbit@rabbit2');
    expect(lineStarting(text, 'new leader')).toBe('new leader     rabbit@rabbit1');
    expect(lineStarting(text, 'election')).toBe(
      "election       2.34 s (fault issued → new leader seen by the survivors' management API (polled every 100 ms))",
    );
    expect(lineStarting(text, 'node down for')).toBe('node down for  2.50 s');
    expect(lineStarting(text, 'rejoin')).toBe(
      'rejoin         14.2 s (restore → rabbit@rabbit2 running in the cluster with 3 of 3 members online, then stable for 3 s)',
    );
    expect(text).not.toContain('not restored');
  });

  it('seen by quorum_status in a survivor', () => {
    const text = renderFailover({ ...failover, fault: 'pause', detectedBy: 'cli', electionMs: 61_000 });
    expect(lineStarting(text, 'election')).toBe(
      "election       1 m 1 s (fault issued → new leader seen by quorum_status asked in a survivor's container (every 250 ms))",
    );
    expect(lineStarting(text, 'fault ')).toMatch(/^fault\s+pause: freeze the container/);
  });

  it('--no-restore: says the node is still faulted, no rejoin figures', () => {
    const text = renderFailover({ ...failover, fault: 'stop', restored: false, downMs: null, rejoinMs: null, membersAfter: null, onlineAfter: null });
    expect(lines(text)).toHaveLength(6);
    expect(lineStarting(text, 'restore')).toBe("restore     not restored (--no-restore): rabbit@rabbit2 is still under 'stop'");
    expect(lineStarting(text, 'election')).toMatch(/^election {4}2\.34 s /);
    expect(text).not.toContain('rejoin');
    expect(text).not.toContain('node down for');
  });
});

describe('renderFailover: faults that take no leader away', () => {
  it('latency: the netem line, no election, the rejoin after the restore', () => {
    const text = renderFailover({
      ...failover,
      fault: 'latency',
      newLeader: null,
      electionMs: null,
      detectedBy: null,
      netem: { delayMs: 300, jitterMs: 50, lossPct: 5 },
    });
    expect(lineStarting(text, 'netem')).toBe('netem           delay 300 ms ± 50 ms, loss 5% on everything rabbit@rabbit2 sends');
    expect(lineStarting(text, 'new leader')).toBe("new leader      none awaited: 'latency' leaves rabbit@rabbit2 in the cluster");
    expect(text).not.toContain('election');
    // The node was slow, not down.
    expect(lineStarting(text, 'fault held for')).toBe('fault held for  2.50 s');
    expect(text).not.toContain('node down');
    expect(lineStarting(text, 'rejoin')).toMatch(/^rejoin\s+14\.2 s/);
  });

  it('quorum-loss: both nodes named, no leader possible while they are down, the leader after the rejoin', () => {
    const text = renderFailover({
      ...failover,
      fault: 'quorum-loss',
      alsoFaulted: ['rabbit@rabbit3'],
      newLeader: null,
      electionMs: null,
      detectedBy: null,
      leaderAfter: 'rabbit3',
    });
    expect(lineStarting(text, 'old leader')).toBe('old leader     rabbit@rabbit2 (with rabbit@rabbit3: no majority left)');
    expect(lineStarting(text, 'new leader')).toBe('new leader     none possible while rabbit@rabbit2 and rabbit@rabbit3 are down (no majority)');
    expect(lineStarting(text, 'leader after')).toBe('leader after   rabbit3 (once every member was back)');
  });

  it('kill-all: every other node named, no leader possible while all are down, the node down for the hold', () => {
    const text = renderFailover({
      ...failover,
      fault: 'kill-all',
      alsoFaulted: ['rabbit1', 'rabbit3'],
      oldLeader: 'rabbit2',
      newLeader: null,
      electionMs: null,
      detectedBy: null,
      leaderAfter: 'rabbit3',
    });
    expect(lineStarting(text, 'new leader')).toBe('new leader     none possible while rabbit2, rabbit1 and rabbit3 are down (no majority)');
    expect(lineStarting(text, 'node down for')).toMatch(/^node down for\s+2\.50 s/);
  });

  it('a document naming a fault this version does not know (rmq-bench report reads older and newer files): printed, not thrown', () => {
    const text = renderFailover({ ...failover, fault: 'unplug' as FailoverResult['fault'], newLeader: null, electionMs: null, detectedBy: null });
    expect(lineStarting(text, 'fault ')).toMatch(/^fault\s+unplug: a fault this version does not know/);
    expect(lineStarting(text, 'new leader')).toMatch(/none awaited: 'unplug'/);
    expect(lineStarting(text, 'fault held for')).toBeDefined();
  });

  it('partition: described, and an election like the others', () => {
    const text = renderFailover({ ...failover, fault: 'partition' });
    expect(lineStarting(text, 'fault ')).toMatch(/^fault\s+partition: cut the node off from its cluster peers/);
    expect(lineStarting(text, 'election')).toMatch(/^election\s+2\.34 s/);
    expect(text).not.toContain('netem');
  });
});

const up: UpResult = {
  alreadyUp: false,
  streamCoordinatorRepairs: [],
  nodeCount: 3,
  elapsedMs: 48_200,
  image: { image: 'rmq-bench/rabbitmq:4.3', how: 'built', elapsedMs: 72_000 },
  composeTool: 'docker compose 2.40.3',
  rabbitmq: '4.3',
  featureFlags: 'stable',
  version: '4.3.6',
  partitionHandling: null,
  nodes: [
    { name: 'rabbit1', amqpUrl: 'amqp://demo:***@127.0.0.1:5672', managementUrl: 'http://127.0.0.1:15672' },
    { name: 'rabbit2', amqpUrl: 'amqp://demo:***@127.0.0.1:5673', managementUrl: 'http://127.0.0.1:15673' },
    { name: 'rabbit3', amqpUrl: 'amqp://demo:***@127.0.0.1:5674', managementUrl: 'http://127.0.0.1:15674' },
  ],
  prometheusUrl: 'http://127.0.0.1:15692/metrics',
};

describe('renderUp', () => {
  const heads: { name: string; result: UpResult; head: string }[] = [
    {
      name: 'cold start with a built image',
      result: up,
      head: 'cluster up (3 nodes, RabbitMQ 4.3.6) in 48.2 s; image rmq-bench/rabbitmq:4.3 built in 1 m 12 s',
    },
    {
      name: 'cold start with an image already present',
      result: { ...up, image: { image: 'rabbitmq:4.3-management', how: 'present', elapsedMs: 12 } },
      head: 'cluster up (3 nodes, RabbitMQ 4.3.6) in 48.2 s; image rabbitmq:4.3-management present',
    },
    {
      name: 'cold start, no image step, unknown version',
      result: { ...up, image: undefined, version: undefined },
      head: 'cluster up (3 nodes, RabbitMQ ?) in 48.2 s',
    },
    {
      name: 'already up',
      result: { ...up, alreadyUp: true, elapsedMs: 312, image: undefined },
      head: 'cluster already up (3 nodes, RabbitMQ 4.3.6), checked in 312 ms',
    },
  ];

  it.each(heads)('$name', ({ result, head }) => {
    const text = renderUp(result);
    expect(lines(text)[0]).toBe(head);
    expect(lineStarting(text, 'rabbit2')).toMatch(/^rabbit2\s+amqp:\/\/demo:\*\*\*@127\.0\.0\.1:5673\s+http:\/\/127\.0\.0\.1:15673$/);
    expect(lines(text).at(-1)).toBe('prometheus: http://127.0.0.1:15692/metrics');
    expect(lines(text)).toHaveLength(1 + 2 + 3 + 1);
  });

  it('a stream coordinator repair: its line under the head', () => {
    const repair = "the stream coordinator's member on rabbit2 never started again after a kill: removed, for the coordinator to add it afresh";
    const text = unwrapped(renderUp({ ...up, image: undefined, elapsedMs: 12_900, streamCoordinatorRepairs: [repair] }));
    expect(lines(text)[0]).toBe('cluster up (3 nodes, RabbitMQ 4.3.6) in 12.9 s');
    expect(lines(text)[1]).toBe(repair);
  });
});
