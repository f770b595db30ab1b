import { describe, expect, it } from 'vitest';
import { FAULT_KINDS } from '../../src/cluster/fault-kinds.js';
import {
  AUTOHEAL_GRACE_MS,
  mendGraceMs,
  partitionsOutliveFaults,
  readViews,
  STUCK_MS,
  sideToRestart,
  stuckNodes,
  type NodeAnswer,
} from '../../src/cluster/partition-mend.js';
import { parseClassicMaster } from '../../src/cluster/leader.js';
import { exactPattern, faultProblem, mirrorPolicy, ownQueueName, QUEUE_TYPES } from '../../src/cluster/queue-types.js';

describe('queue types and the faults they take', () => {
  it.each(QUEUE_TYPES.flatMap((type) => FAULT_KINDS.map((fault) => ({ type, fault }))))('$type under $fault', ({ type, fault }) => {
    const refused = type !== 'quorum' && (fault === 'quorum-loss' || fault === 'membership');
    expect(faultProblem(type, fault) !== undefined).toBe(refused);
  });
  it('none takes any type', () => {
    for (const t of QUEUE_TYPES) expect(faultProblem(t, 'none')).toBeUndefined();
  });
  it("a scenario's own queue and the mirror policy that matches exactly it", () => {
    expect(ownQueueName('compare', 'mirrored')).toBe('rmq-bench.compare.mirrored');
    const p = mirrorPolicy(exactPattern('rmq-bench.compare.mirrored'));
    expect(p.definition).toEqual({ 'ha-mode': 'all', 'ha-sync-mode': 'automatic' });
    expect(p['apply-to']).toBe('queues');
    const re = new RegExp(p.pattern);
    expect(re.test('rmq-bench.compare.mirrored')).toBe(true);
    expect(re.test('rmq-bench-compare-mirrored')).toBe(false);
    expect(re.test('rmq-bench.compare.mirrored.2')).toBe(false);
    const several = new RegExp(exactPattern('q.1', 'q.control'));
    expect(['q.1', 'q.control', 'q.2', 'q.1x'].map((n) => several.test(n))).toEqual([true, true, false, false]);
  });
});

describe("a classic queue's master, as a node reports it", () => {
  it.each([
    { text: 'master=rabbit@rabbit2', node: 'rabbit@rabbit2' },
    { text: 'q\t<rabbit@rabbit3.1796351317.4660.0>\nother\t<rabbit@rabbit1.1.2.0>\n', node: 'rabbit@rabbit3' },
    { text: 'other\t<rabbit@rabbit1.1.2.0>\n', node: undefined },
    { text: '', node: undefined },
  ])('$text → $node', ({ text, node }) => {
    expect(parseClassicMaster(text, 'q')).toBe(node);
  });
});

describe('a partition that outlives its fault', () => {
  it.each([
    { rabbitmq: '3.10', partitionHandling: undefined, outlives: true },
    { rabbitmq: '3.10', partitionHandling: 'ignore', outlives: true },
    { rabbitmq: '3.10', partitionHandling: 'pause_minority', outlives: false },
    { rabbitmq: '4.0', partitionHandling: 'autoheal', outlives: false },
    { rabbitmq: '4.0', partitionHandling: undefined, outlives: true },
    { rabbitmq: '4.3', partitionHandling: undefined, outlives: false },
  ] as const)('RabbitMQ $rabbitmq, handling $partitionHandling: $outlives', ({ rabbitmq, partitionHandling, outlives }) => {
    expect(partitionsOutliveFaults({ rabbitmq, partitionHandling })).toBe(outlives);
    // Ended at once where it outlives its fault; after the grace where the broker should end it; never on 4.3.
    expect(mendGraceMs({ rabbitmq, partitionHandling })).toBe(rabbitmq === '4.3' ? null : outlives ? 0 : AUTOHEAL_GRACE_MS);
  });

  const views = (o: Record<string, string[]>): Map<string, string[]> => new Map(Object.entries(o));
  it.each<{ name: string; v: Record<string, string[]>; prefer: string[]; side: string[] }>([
    { name: 'no partition reported', v: { rabbit1: [], rabbit2: [], rabbit3: [] }, prefer: [], side: [] },
    { name: 'only the cut-off node notices', v: { rabbit1: ['rabbit2', 'rabbit3'], rabbit2: [], rabbit3: [] }, prefer: [], side: ['rabbit1'] },
    { name: 'the majority notices', v: { rabbit1: [], rabbit2: ['rabbit1'], rabbit3: ['rabbit1'] }, prefer: [], side: ['rabbit1'] },
    { name: 'both sides notice', v: { rabbit1: ['rabbit2', 'rabbit3'], rabbit2: ['rabbit1'], rabbit3: ['rabbit1'] }, prefer: [], side: ['rabbit1'] },
    {
      name: 'halves on 5: the minority of two',
      v: { rabbit1: ['rabbit3', 'rabbit4', 'rabbit5'], rabbit2: ['rabbit3', 'rabbit4', 'rabbit5'], rabbit3: [], rabbit4: [], rabbit5: [] },
      prefer: ['rabbit1'],
      side: ['rabbit1', 'rabbit2'],
    },
    {
      name: 'a node that does not answer counts with the side it is not reported against',
      v: { rabbit2: ['rabbit1'], rabbit3: [] },
      prefer: [],
      side: ['rabbit1'],
    },
    { name: 'a tie of two (4 nodes would be): the side of the faulted node', v: { a: ['c', 'd'], b: [], c: [], d: [] }, prefer: ['c'], side: ['c', 'd'] },
  ])('$name → $side', ({ v, prefer, side }) => {
    expect(sideToRestart(views(v), prefer)).toEqual(side);
  });
});

describe('stuckNodes: a node whose RabbitMQ stays stopped is restarted after STUCK_MS', () => {
  it.each<{ name: string; since: Record<string, number>; now: number; stuck: string[] }>([
    { name: 'none down', since: {}, now: 100_000, stuck: [] },
    { name: 'down for less', since: { rabbit3: 80_000 }, now: 80_000 + STUCK_MS - 1, stuck: [] },
    { name: 'down for exactly STUCK_MS', since: { rabbit3: 80_000 }, now: 80_000 + STUCK_MS, stuck: ['rabbit3'] },
    { name: 'two, one long enough', since: { rabbit3: 0, rabbit1: 90_000 }, now: 100_000, stuck: ['rabbit3'] },
    { name: 'two long enough, sorted', since: { rabbit3: 0, rabbit1: 1 }, now: 100_000, stuck: ['rabbit1', 'rabbit3'] },
  ])('$name → $stuck', ({ since, now, stuck }) => {
    expect(stuckNodes(new Map(Object.entries(since)), now)).toEqual(stuck);
  });
});

describe('readViews: what the nodes report, from their /api/nodes answers', () => {
  const sees = (running: string[], partitions: Record<string, string[]> = {}): NodeAnswer => ({
    nodes: ['rabbit1', 'rabbit2', 'rabbit3'].map((n) => ({
      name: `rabbit@${n}`,
      running: running.includes(n),
      partitions: (partitions[n] ?? []).map((p) => `rabbit@${p}`),
    })),
  });
  const all = ['rabbit1', 'rabbit2', 'rabbit3'];
  it.each<{
    name: string;
    answers: Record<string, NodeAnswer>;
    partitions: Record<string, string[]>;
    unseen: Record<string, string[]>;
    down: string[];
    whole: boolean;
  }>([
    {
      name: 'whole',
      answers: { rabbit1: sees(all), rabbit2: sees(all), rabbit3: sees(all) },
      partitions: { rabbit1: [], rabbit2: [], rabbit3: [] },
      unseen: { rabbit1: [], rabbit2: [], rabbit3: [] },
      down: [],
      whole: true,
    },
    {
      name: 'a reported partition',
      answers: { rabbit1: sees(all, { rabbit1: ['rabbit2'] }), rabbit2: sees(all), rabbit3: sees(all) },
      partitions: { rabbit1: ['rabbit2'], rabbit2: [], rabbit3: [] },
      unseen: { rabbit1: [], rabbit2: [], rabbit3: [] },
      down: [],
      whole: false,
    },
    {
      name: 'a split no node reports (3.10 after autoheal)',
      answers: { rabbit1: sees(['rabbit1', 'rabbit2']), rabbit2: sees(['rabbit1', 'rabbit2']), rabbit3: sees(['rabbit3']) },
      partitions: { rabbit1: [], rabbit2: [], rabbit3: [] },
      unseen: { rabbit1: ['rabbit3'], rabbit2: ['rabbit3'], rabbit3: ['rabbit1', 'rabbit2'] },
      down: [],
      whole: false,
    },
    {
      name: 'a node with RabbitMQ stopped (no answer, and it says so itself), the others list it not running: down, not a split',
      answers: { rabbit1: sees(['rabbit1', 'rabbit2']), rabbit2: sees(['rabbit1', 'rabbit2']), rabbit3: { failed: 'stopped' } },
      partitions: { rabbit1: [], rabbit2: [] },
      unseen: { rabbit1: [], rabbit2: [] },
      down: ['rabbit3'],
      whole: false,
    },
    {
      name: 'a node that does not answer, and does not say its RabbitMQ is stopped, is not down',
      answers: { rabbit1: sees(all), rabbit2: sees(all), rabbit3: { failed: 'other' } },
      partitions: { rabbit1: [], rabbit2: [] },
      unseen: { rabbit1: [], rabbit2: [] },
      down: [],
      whole: false,
    },
  ])('$name', ({ answers, partitions, unseen, down, whole }) => {
    const v = readViews(new Map(Object.entries(answers)));
    expect(Object.fromEntries(v.partitions)).toEqual(partitions);
    expect(Object.fromEntries(v.unseen)).toEqual(unseen);
    expect(v.down).toEqual(down);
    expect(v.whole).toBe(whole);
  });

  it('the split no node reports restarts the smaller side', () => {
    const v = readViews(new Map(Object.entries({ rabbit1: sees(['rabbit1', 'rabbit2']), rabbit2: sees(['rabbit1', 'rabbit2']), rabbit3: sees(['rabbit3']) })));
    expect(sideToRestart(v.unseen, ['rabbit1'])).toEqual(['rabbit3']);
  });
});
