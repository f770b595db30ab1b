import { describe, expect, it } from 'vitest';
import { checkFaultFitsCluster, FaultNeedsNodesError } from '../../src/faults/injector.js';
import { awaitsElection } from '../../src/faults/registry.js';
import { cutsByNode, planShape, planShapeFrom } from '../../src/faults/net/partition-shapes.js';
import { checkNodeCount, checkPublishedPorts, foreignFiles, staleContainers } from '../../src/cluster/lifecycle/record.js';
import { composeEnv, loadConfig, nodeCountProblem, recordedNodeCount } from '../../src/config.js';
import { UsageError } from '../../src/errors.js';
import { seededRandom } from '../../src/util/random.js';

const three = ['rabbit1', 'rabbit2', 'rabbit3'];
const five = ['rabbit1', 'rabbit2', 'rabbit3', 'rabbit4', 'rabbit5'];

/** Who reaches whom once the cuts are applied (every node reaches itself). */
function reach(nodes: readonly string[], cuts: readonly [string, string][]): Map<string, string[]> {
  const cut = new Set(cuts.map(([a, b]) => `${a}|${b}`));
  return new Map(nodes.map((n) => [n, nodes.filter((m) => m === n || !(cut.has(`${n}|${m}`) || cut.has(`${m}|${n}`)))]));
}

const majority = (n: number): number => Math.floor(n / 2) + 1;

describe('planShape: the links each shape cuts, for every seed', () => {
  const seeds = Array.from({ length: 40 }, (_, i) => i + 1);

  it.each([
    ['partition-halves', three, 1, 2],
    ['partition-halves', five, 2, 3],
  ] as const)('%s on %j nodes: the target in a minority of %i, cut from a majority of %i', (shape, nodes, minority, rest) => {
    for (const seed of seeds) {
      for (const target of nodes) {
        const p = planShape(shape, nodes, target, seededRandom(seed));
        const r = reach(nodes, p.cuts);
        expect(r.get(target)!.length, `seed ${seed}`).toBe(minority);
        const others = nodes.filter((n) => !r.get(target)!.includes(n));
        expect(others).toHaveLength(rest);
        for (const o of others) expect(r.get(o)!.length).toBe(rest);
        expect(p.cuts).toHaveLength(minority * rest);
        expect(p.text.split(' | ').map((g) => g.split(' ').length)).toEqual([minority, rest]);
      }
    }
  });

  it.each([
    ['partition-bridge', three],
    ['partition-bridge', five],
  ] as const)('%s on %j nodes: one node reaches all; the two halves only themselves and it; the target in a half', (shape, nodes) => {
    for (const seed of seeds) {
      for (const target of nodes) {
        const p = planShape(shape, nodes, target, seededRandom(seed));
        const r = reach(nodes, p.cuts);
        const bridges = nodes.filter((n) => r.get(n)!.length === nodes.length);
        expect(bridges, `seed ${seed}`).toHaveLength(1);
        expect(bridges).not.toContain(target);
        const [left, bridge, right] = p.text.split(' | ').map((g) => g.split(' '));
        expect(bridge).toEqual(bridges);
        expect(left).toContain(target);
        expect(left!.length + right!.length).toBe(nodes.length - 1);
        expect(Math.abs(left!.length - right!.length)).toBeLessThanOrEqual(1);
        // A half with the bridge is a majority on both sides: the leader keeps one.
        for (const n of [...left!, ...right!]) expect(r.get(n)!.length).toBeGreaterThanOrEqual(majority(nodes.length));
      }
    }
  });

  it('partition-ring on 5: every node reaches exactly its two neighbours, so each sees a majority and no two the same one', () => {
    const seen = new Set<string>();
    for (const seed of seeds) {
      const p = planShape('partition-ring', five, 'rabbit3', seededRandom(seed));
      seen.add(p.text);
      const r = reach(five, p.cuts);
      for (const n of five) expect(r.get(n)!.length).toBe(3);
      const sets = five.map((n) => [...r.get(n)!].sort().join(','));
      expect(new Set(sets).size).toBe(5);
      expect(p.cuts).toHaveLength(5);
      // The text walks the ring: neighbours in it are exactly the nodes not cut from each other.
      const ring = p.text.replace(/^ring /, '').split('-');
      expect(ring[0]).toBe(ring[5]);
      for (let i = 0; i < 5; i++) expect(r.get(ring[i]!)).toContain(ring[i + 1]);
    }
    expect(seen.size, 'the seed draws different rings').toBeGreaterThan(5);
  });

  it.each([
    ['partition-ring', three, "'partition-ring' needs 5 nodes, not 3"],
    ['partition-halves', ['rabbit1', 'rabbit2'], "'partition-halves' needs 3 nodes, not 2"],
  ] as const)('%s on %j: a RangeError', (shape, nodes, message) => {
    expect(() => planShape(shape, nodes, 'rabbit1', seededRandom(1))).toThrow(message);
  });

  it('a target not in the cluster is refused', () => {
    expect(() => planShape('partition-halves', three, 'rabbit4', seededRandom(1))).toThrow('rabbit4 is not one of rabbit1, rabbit2, rabbit3');
  });

  it('planShapeFrom: the same pick, the same shape (chaos replays a seed)', () => {
    for (const pick of [0, 0.25, 0.5, 0.999]) {
      expect(planShapeFrom('partition-ring', five, 'rabbit1', pick)).toEqual(planShapeFrom('partition-ring', five, 'rabbit1', pick));
    }
  });

  it('cutsByNode: each cut listed at both ends', () => {
    expect(
      Object.fromEntries(
        cutsByNode([
          ['rabbit1', 'rabbit2'],
          ['rabbit1', 'rabbit3'],
        ]),
      ),
    ).toEqual({ rabbit1: ['rabbit2', 'rabbit3'], rabbit2: ['rabbit1'], rabbit3: ['rabbit1'] });
  });
});

describe('which faults fit a cluster, and which take the leader away', () => {
  it.each([
    ['partition-ring', 3, true],
    ['partition-ring', 5, false],
    ['partition-halves', 3, false],
    ['partition-bridge', 3, false],
    ['kill', 3, false],
  ] as const)('%s on %i nodes: refused %s', (kind, nodes, refused) => {
    const call = () => checkFaultFitsCluster(kind, nodes);
    if (refused) {
      expect(call).toThrow(FaultNeedsNodesError);
      expect(call).toThrow("'partition-ring' needs a cluster of 5 nodes; this one has 3");
    } else expect(call).not.toThrow();
  });

  it.each([
    ['partition-halves', true],
    ['partition', true],
    ['partition-ring', false],
    ['partition-bridge', false],
    ['quorum-loss', false],
    ['latency', false],
  ] as const)('%s: a new leader awaited %s', (kind, awaited) => {
    expect(awaitsElection(kind)).toBe(awaited);
  });
});

describe('the node count: 3 or 5, recorded per cluster', () => {
  it.each([
    ['3', undefined],
    ['5', undefined],
    ['4', 'is not a node count rmq-bench runs (3 or 5)'],
    ['five', 'is not a node count rmq-bench runs (3 or 5)'],
    ['5.0', 'is not a node count rmq-bench runs (3 or 5)'],
  ])('%s: %s', (value, problem) => {
    expect(nodeCountProblem(value)).toBe(problem);
  });

  it('RMQ_BENCH_NODES=5: rabbit1..5 on five ports, in the profile five', () => {
    const c = loadConfig({ RMQ_BENCH_NODES: '5' });
    expect(c.nodes.map((n) => [n.name, n.amqpPort, n.managementPort])).toEqual([
      ['rabbit1', 5672, 15672],
      ['rabbit2', 5673, 15673],
      ['rabbit3', 5674, 15674],
      ['rabbit4', 5675, 15675],
      ['rabbit5', 5676, 15676],
    ]);
    expect(composeEnv(c)).toMatchObject({ RMQ_BENCH_NODES: '5', COMPOSE_PROFILES: 'five', RMQ_BENCH_CONTAINER_5: 'rabbit5' });
  });

  it('a bad RMQ_BENCH_NODES is a usage error naming it; the ports must leave room for every node', () => {
    expect(() => loadConfig({ RMQ_BENCH_NODES: '4' })).toThrow('RMQ_BENCH_NODES=4 is not a node count rmq-bench runs (3 or 5)');
    expect(() => loadConfig({ RMQ_BENCH_NODES: '5', RMQ_BENCH_AMQP_PORT: '65533' })).toThrow(UsageError);
    expect(loadConfig({ RMQ_BENCH_AMQP_PORT: '65533' }).nodes).toHaveLength(3);
  });

  it('without a state folder in the environment nothing is read: 3 nodes', () => {
    expect(loadConfig({}).stateDir).toBeUndefined();
    expect(recordedNodeCount(undefined, 'rmq-bench')).toBeUndefined();
    expect(loadConfig({}).nodes).toHaveLength(3);
    expect(loadConfig({ HOME: '/home/u' }).stateDir).toBe('/home/u/.local/state/rmq-bench');
    expect(loadConfig({ HOME: '/home/u', XDG_STATE_HOME: '/s' }).stateDir).toBe('/s/rmq-bench');
    expect(loadConfig({ HOME: '/home/u', RMQ_BENCH_STATE_DIR: '/r' }).stateDir).toBe('/r');
  });

  it.each([
    [0, 5, false],
    [3, 3, false],
    [5, 5, false],
    [3, 5, true],
    [5, 3, true],
  ] as const)('containers of %i nodes, %i asked: refused %s', (existing, wanted, refused) => {
    const call = () => checkNodeCount(existing, wanted, 'rmq-bench');
    if (refused) expect(call).toThrow(`the cluster has ${existing} nodes, not ${wanted}: it is not resized in place`);
    else expect(call).not.toThrow();
  });

  it.each([
    [0, undefined, 5672, false],
    [3, undefined, 5672, false],
    [3, 31672, 31672, false],
    [3, 5672, 5672, false],
    [3, 31672, 5672, true],
    [5, 5672, 31672, true],
  ] as const)('%i containers publishing AMQP on %s, port %i asked: refused %s', (count, published, wanted, refused) => {
    const config = loadConfig({ RMQ_BENCH_NAME: 'legacy', RMQ_BENCH_AMQP_PORT: String(wanted) });
    const call = () =>
      checkPublishedPorts(
        { count, amqpPort: published, rabbitmq: '4.3', partitionHandling: undefined, featureFlags: undefined, filesFrom: [], madeWith: [] },
        config,
      );
    if (refused) expect(call).toThrow(`the cluster legacy publishes AMQP on ${published}, not ${wanted}`);
    else expect(call).not.toThrow();
  });
});

describe("a clone never trusts another clone's containers: where their cluster files come from", () => {
  const here = '/home/u/rmq-bench/cluster';
  const exists = (p: string): boolean => p !== '/tmp/deleted-clone/cluster';
  it.each<{ name: string; filesFrom: { container: string; source: string | undefined }[]; reason: string | undefined }>([
    { name: 'no containers', filesFrom: [], reason: undefined },
    {
      name: 'every container from this checkout (a trailing slash is the same folder)',
      filesFrom: [
        { container: 'rabbit1', source: here },
        { container: 'rabbit2', source: `${here}/` },
      ],
      reason: undefined,
    },
    {
      name: 'from a deleted clone',
      filesFrom: [{ container: 'rabbit1', source: '/tmp/deleted-clone/cluster' }],
      reason: 'rabbit1 was made from /tmp/deleted-clone/cluster, which no longer exists',
    },
    {
      name: 'one of them from another checkout that still exists',
      filesFrom: [
        { container: 'rabbit1', source: here },
        { container: 'rabbit2', source: '/srv/other-clone/cluster' },
      ],
      reason: 'rabbit2 was made from another checkout (/srv/other-clone/cluster)',
    },
    { name: 'made without the mount (by hand)', filesFrom: [{ container: 'rabbit1', source: undefined }], reason: 'rabbit1 mounts no cluster files' },
  ])('$name', ({ filesFrom, reason }) => {
    expect(foreignFiles({ filesFrom }, here, exists)).toBe(reason);
  });
});

describe('containers older than what this rmq-bench makes are made again, never trusted as up', () => {
  const tag = 'rmq-bench/rabbitmq:4.3';
  const made = (over: Partial<{ image: string | undefined; imageId: string | undefined; streamPort: string | undefined }> = {}) => ({
    container: 'rabbit1',
    image: tag,
    imageId: 'sha256:new',
    streamPort: '5552',
    ...over,
  });
  const now = (id: string | undefined, stale?: string) => () => ({ id, stale });
  it.each([
    { name: 'no containers', madeWith: [], tagNow: now('sha256:new'), reason: undefined },
    { name: 'as they would be made now', madeWith: [made()], tagNow: now('sha256:new'), reason: undefined },
    {
      name: 'made before the stream port',
      madeWith: [made({ streamPort: undefined })],
      tagNow: now('sha256:new'),
      reason: 'rabbit1 was made without the stream port 5552',
    },
    {
      name: 'another stream port',
      madeWith: [made({ streamPort: '6552' })],
      tagNow: now('sha256:new'),
      reason: 'rabbit1 was made without the stream port 5552',
    },
    {
      name: 'the image built again since',
      madeWith: [made({ imageId: 'sha256:old' })],
      tagNow: now('sha256:new'),
      reason: `rabbit1 runs an older build of ${tag}`,
    },
    {
      name: 'the image itself lacks a plugin now enabled',
      madeWith: [made()],
      tagNow: now('sha256:new', 'it lacks rabbitmq_stream (cluster/enabled_plugins)'),
      reason: `rabbit1 runs ${tag}, and it lacks rabbitmq_stream (cluster/enabled_plugins)`,
    },
    { name: 'an image no longer on this machine: nothing to compare', madeWith: [made({ imageId: 'sha256:old' })], tagNow: now(undefined), reason: undefined },
  ])('$name', ({ madeWith, tagNow, reason }) => {
    expect(staleContainers({ madeWith }, 5552, tagNow)).toBe(reason);
  });
});
