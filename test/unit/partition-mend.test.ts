import { describe, expect, it } from 'vitest';
import {
  answerFromOwnView,
  BOOT_MS,
  describeStep,
  HEALING_MS,
  longOverMemory,
  MAX_RESTARTS_PER_NODE,
  type MendMemory,
  type MendStep,
  type NodeAnswer,
  observe,
  planMend,
  readViews,
  restarted,
  SETTLE_MS,
  STUCK_MS,
  sideToRestart,
  groupsOfCuts,
  startMemory,
  stuckNodes,
} from '../../src/cluster/mend/mend-plan.js';
import { AUTOHEAL_GRACE_MS, mendGraceMs, partitionsOutliveFaults } from '../../src/cluster/mend/partition-mend.js';

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
    expect(sideToRestart(views(v), { prefer })).toEqual(side);
  });
});

describe("groupsOfCuts and sideToRestart with the fault's groups: a partial report read as the fault's split", () => {
  const three = ['rabbit1', 'rabbit2', 'rabbit3'];
  const five = ['rabbit1', 'rabbit2', 'rabbit3', 'rabbit4', 'rabbit5'];
  it.each<{ name: string; nodes: string[]; cuts: [string, string][]; groups: string[][] }>([
    { name: 'nothing cut', nodes: three, cuts: [], groups: [three] },
    {
      name: 'partition of rabbit1',
      nodes: three,
      cuts: [
        ['rabbit1', 'rabbit2'],
        ['rabbit3', 'rabbit1'],
      ],
      groups: [['rabbit1'], ['rabbit2', 'rabbit3']],
    },
    {
      name: 'halves on 5',
      nodes: five,
      cuts: [
        ['rabbit2', 'rabbit1'],
        ['rabbit2', 'rabbit3'],
        ['rabbit2', 'rabbit5'],
        ['rabbit4', 'rabbit1'],
        ['rabbit4', 'rabbit3'],
        ['rabbit4', 'rabbit5'],
      ],
      groups: [
        ['rabbit1', 'rabbit3', 'rabbit5'],
        ['rabbit2', 'rabbit4'],
      ],
    },
    { name: 'a bridge joins the halves: one group', nodes: three, cuts: [['rabbit1', 'rabbit2']], groups: [three] },
  ])('$name', ({ nodes, cuts, groups }) => {
    expect(groupsOfCuts(nodes, cuts)).toEqual(groups);
  });

  const views = (o: Record<string, string[]>): Map<string, string[]> => new Map(Object.entries(o));
  const cutOff1 = [['rabbit1'], ['rabbit2', 'rabbit3']];
  it.each<{ name: string; v: Record<string, string[]>; groups: string[][]; prefer: string[]; side: string[] }>([
    // Seen on 3.10.8 under load, just after the heal: without the groups, rabbit1's report would say rabbit2.
    {
      name: 'the cut-off node and one peer list each other, the third not yet',
      v: { rabbit1: ['rabbit2'], rabbit2: ['rabbit1'], rabbit3: [] },
      groups: cutOff1,
      prefer: ['rabbit1'],
      side: ['rabbit1'],
    },
    { name: 'only the cut-off node, partly', v: { rabbit1: ['rabbit3'], rabbit2: [], rabbit3: [] }, groups: cutOff1, prefer: ['rabbit1'], side: ['rabbit1'] },
    {
      name: 'every report',
      v: { rabbit1: ['rabbit2', 'rabbit3'], rabbit2: ['rabbit1'], rabbit3: ['rabbit1'] },
      groups: cutOff1,
      prefer: ['rabbit1'],
      side: ['rabbit1'],
    },
    {
      name: 'halves on 5, one report',
      v: { rabbit1: [], rabbit2: ['rabbit5'], rabbit3: [], rabbit4: [], rabbit5: [] },
      groups: [
        ['rabbit1', 'rabbit3', 'rabbit5'],
        ['rabbit2', 'rabbit4'],
      ],
      prefer: ['rabbit2'],
      side: ['rabbit2', 'rabbit4'],
    },
    {
      name: 'a tie of two groups: the one the fault was aimed at',
      v: { a: ['c'], b: [], c: [], d: [] },
      groups: [
        ['a', 'b'],
        ['c', 'd'],
      ],
      prefer: ['c'],
      side: ['c', 'd'],
    },
    { name: 'nothing reported', v: { rabbit1: [], rabbit2: [], rabbit3: [] }, groups: cutOff1, prefer: ['rabbit1'], side: [] },
    {
      name: 'one group (a bridge): read from the reports',
      v: { rabbit1: ['rabbit2'], rabbit2: ['rabbit1'], rabbit3: [] },
      groups: [['rabbit1', 'rabbit2', 'rabbit3']],
      prefer: ['rabbit1'],
      side: ['rabbit2'],
    },
  ])('$name → $side', ({ v, groups, prefer, side }) => {
    expect(sideToRestart(views(v), { prefer, groups })).toEqual(side);
  });

  it('without the groups, the partial report of the first case names the wrong side (why the mend is given the cuts)', () => {
    expect(sideToRestart(views({ rabbit1: ['rabbit2'], rabbit2: ['rabbit1'], rabbit3: [] }), { prefer: ['rabbit1'] })).toEqual(['rabbit2']);
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
    booting?: string[];
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
      name: 'a node that does not answer while its RabbitMQ boots (the others see it running, as they did a hung boot): booting, not down',
      answers: { rabbit1: sees(all), rabbit2: sees(all), rabbit3: { failed: 'booting' } },
      partitions: { rabbit1: [], rabbit2: [] },
      unseen: { rabbit1: [], rabbit2: [] },
      down: [],
      booting: ['rabbit3'],
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
  ])('$name', ({ answers, partitions, unseen, down, booting = [], whole }) => {
    const v = readViews(new Map(Object.entries(answers)));
    expect(v.booting).toEqual(booting);
    expect(Object.fromEntries(v.partitions)).toEqual(partitions);
    expect(Object.fromEntries(v.unseen)).toEqual(unseen);
    expect(v.down).toEqual(down);
    expect(v.whole).toBe(whole);
  });

  it("management silent on every node (3.10 under autoheal): the nodes' own views, rabbit2 listing rabbit1, say to restart rabbit1", () => {
    const names = ['rabbit@rabbit1', 'rabbit@rabbit2', 'rabbit@rabbit3'];
    const running = ['rabbit@rabbit2', 'rabbit@rabbit3', 'rabbit@rabbit1'];
    const v = readViews(
      new Map([
        ['rabbit1', answerFromOwnView(names, 'rabbit@rabbit1', { running, partitions: [] })],
        ['rabbit2', answerFromOwnView(names, 'rabbit@rabbit2', { running, partitions: ['rabbit@rabbit1'] })],
        ['rabbit3', answerFromOwnView(names, 'rabbit@rabbit3', { running, partitions: [] })],
      ]),
    );
    expect(v.whole).toBe(false);
    expect(Object.fromEntries(v.partitions)).toEqual({ rabbit1: [], rabbit2: ['rabbit1'], rabbit3: [] });
    expect(sideToRestart(v.partitions)).toEqual(['rabbit1']);
  });

  it('the split no node reports restarts the smaller side', () => {
    const v = readViews(new Map(Object.entries({ rabbit1: sees(['rabbit1', 'rabbit2']), rabbit2: sees(['rabbit1', 'rabbit2']), rabbit3: sees(['rabbit3']) })));
    expect(sideToRestart(v.unseen, { prefer: ['rabbit1'] })).toEqual(['rabbit3']);
  });
});

/*
 * planMend, step by step: each case is a run of looks at the cluster (a time in seconds and what
 * each node answers), with the step expected after each. A restart the plan asks for is recorded
 * as made at that look, as mendPartition does.
 */

const NODES3 = ['rabbit1', 'rabbit2', 'rabbit3'];

/** What one node answers: the nodes it sees running and those it lists as partitioned; or no answer. */
type Says = { sees?: string[]; partitions?: string[] } | 'stopped' | 'booting' | 'other';

function look(says: Record<string, Says>, nodes: readonly string[] = NODES3, healing: readonly string[] = []) {
  const answers = new Map<string, NodeAnswer>();
  for (const n of nodes) {
    const s = says[n] ?? {};
    if (s === 'stopped' || s === 'booting' || s === 'other') {
      answers.set(n, { failed: s });
      continue;
    }
    const sees = s.sees ?? nodes;
    answers.set(n, {
      nodes: nodes.map((x) => ({
        name: `rabbit@${x}`,
        running: sees.includes(x),
        partitions: x === n ? (s.partitions ?? []).map((p) => `rabbit@${p}`) : [],
      })),
    });
  }
  return readViews(answers, healing);
}

const WHOLE: Record<string, Says> = {};
const restart = (nodes: string[], why: Extract<MendStep, { action: 'restart' }>['why']): MendStep => ({ action: 'restart', nodes, why });
const wait = (why: Extract<MendStep, { action: 'wait' }>['why'], nodes: string[] = []): MendStep => ({ action: 'wait', why, nodes });
const DONE: MendStep = { action: 'done' };

interface Case {
  name: string;
  graceMs?: number;
  faulted?: string[];
  /** The links the fault cut. */
  cuts?: [string, string][];
  /** The fault long over (cluster up, cluster status): the first look's memory is longOverMemory. */
  longOver?: boolean;
  /** healing: the nodes that say an autoheal round is under way. */
  looks: { atS: number; says: Record<string, Says>; healing?: string[]; step: MendStep }[];
}

function run(c: Case): MendStep[] {
  let memory: MendMemory | undefined = c.longOver ? undefined : startMemory(0);
  const steps: MendStep[] = [];
  for (const { atS, says, healing } of c.looks) {
    const views = look(says, NODES3, healing);
    const now = atS * 1000;
    memory = memory === undefined ? longOverMemory(views, now) : observe(memory, views, now);
    const step = planMend(memory, views, now, { graceMs: c.graceMs ?? 0, nodes: NODES3, faulted: c.faulted, cuts: c.cuts });
    if (step.action === 'restart') memory = restarted(memory, step.nodes, step.why, now);
    steps.push(step);
  }
  return steps;
}

/** rabbit1 cut off, both sides noticing. */
const HALVES: Record<string, Says> = {
  rabbit1: { sees: ['rabbit1'], partitions: ['rabbit2', 'rabbit3'] },
  rabbit2: { sees: ['rabbit2', 'rabbit3'], partitions: ['rabbit1'] },
  rabbit3: { sees: ['rabbit2', 'rabbit3'], partitions: ['rabbit1'] },
};
const SETTLED_S = SETTLE_MS / 1000 + 1;
const STUCK_S = STUCK_MS / 1000;
const BOOT_S = BOOT_MS / 1000;
const HEALING_S = HEALING_MS / 1000;

describe('planMend: from what each node reports, and what was done, the next step', () => {
  it.each<Case>([
    { name: 'a whole cluster: done at the first look', looks: [{ atS: 0, says: WHOLE, step: DONE }] },
    {
      name: "autoheal: a round under way is left alone, a loser stopped past STUCK_MS too, and a whole cluster waits for the round's end",
      graceMs: AUTOHEAL_GRACE_MS,
      faulted: ['rabbit1'],
      looks: [
        { atS: 0, says: HALVES, healing: ['rabbit1', 'rabbit3'], step: wait('healing', ['rabbit1', 'rabbit3']) },
        { atS: 90, says: { ...HALVES, rabbit1: 'stopped' }, healing: ['rabbit3'], step: wait('healing', ['rabbit3']) },
        { atS: 130, says: WHOLE, healing: ['rabbit1'], step: wait('healing', ['rabbit1']) },
        { atS: 140, says: WHOLE, step: DONE },
      ],
    },
    {
      name: `autoheal: a round under way for HEALING_MS is no longer waited for: the smaller side restarted, a whole cluster done`,
      graceMs: AUTOHEAL_GRACE_MS,
      faulted: ['rabbit1'],
      looks: [
        { atS: 0, says: HALVES, healing: ['rabbit2'], step: wait('healing', ['rabbit2']) },
        { atS: HEALING_S - 1, says: HALVES, healing: ['rabbit2'], step: wait('healing', ['rabbit2']) },
        { atS: HEALING_S, says: HALVES, healing: ['rabbit2'], step: restart(['rabbit1'], 'partition') },
        { atS: HEALING_S + 30, says: WHOLE, healing: ['rabbit2'], step: DONE },
      ],
    },
    {
      name: 'autoheal: a round that ended and one that starts later: the count starts afresh',
      graceMs: AUTOHEAL_GRACE_MS,
      faulted: ['rabbit1'],
      looks: [
        { atS: 0, says: HALVES, healing: ['rabbit2'], step: wait('healing', ['rabbit2']) },
        { atS: 10, says: HALVES, step: wait('grace') },
        { atS: 20, says: HALVES, healing: ['rabbit2'], step: wait('healing', ['rabbit2']) },
        { atS: HEALING_S + 19, says: HALVES, healing: ['rabbit2'], step: wait('healing', ['rabbit2']) },
        { atS: HEALING_S + 20, says: HALVES, healing: ['rabbit2'], step: restart(['rabbit1'], 'partition') },
      ],
    },
    {
      name: 'ignore: the cut-off side restarted at once, waited for while it boots and settles, then done',
      faulted: ['rabbit1'],
      looks: [
        { atS: 0, says: HALVES, step: restart(['rabbit1'], 'partition') },
        { atS: 5, says: { ...HALVES, rabbit1: 'other' }, step: wait('booting', ['rabbit1']) },
        { atS: 20, says: { rabbit2: { partitions: ['rabbit1'] } }, step: wait('settling', ['rabbit1']) },
        { atS: 22, says: WHOLE, step: DONE },
      ],
    },
    {
      name: "the same first look, with the fault's cuts known (rabbit1 cut from both): rabbit1 restarted, not rabbit2 of the majority",
      faulted: ['rabbit1'],
      cuts: [
        ['rabbit1', 'rabbit2'],
        ['rabbit1', 'rabbit3'],
      ],
      looks: [
        {
          atS: 0,
          says: { rabbit1: { sees: ['rabbit1', 'rabbit3'], partitions: ['rabbit2'] }, rabbit2: { sees: ['rabbit2', 'rabbit3'], partitions: ['rabbit1'] } },
          step: restart(['rabbit1'], 'partition'),
        },
        { atS: 30, says: WHOLE, step: DONE },
      ],
    },
    {
      name: 'the stale third node seen on 3.10 under load: rabbit2, then rabbit1 restarted, and rabbit3 still lists rabbit1: rabbit3 is restarted, not rabbit1 again',
      faulted: ['rabbit1'],
      looks: [
        // A bridge-like report first: rabbit1 lists rabbit2 only (rabbit3 saw both sides).
        {
          atS: 0,
          says: { rabbit1: { sees: ['rabbit1', 'rabbit3'], partitions: ['rabbit2'] }, rabbit2: { sees: ['rabbit2', 'rabbit3'] } },
          step: restart(['rabbit2'], 'partition'),
        },
        { atS: 40, says: { rabbit1: { partitions: ['rabbit2', 'rabbit3'] }, rabbit2: { sees: ['rabbit2', 'rabbit3'] } }, step: wait('settling', ['rabbit2']) },
        {
          atS: 40 + SETTLED_S,
          says: { rabbit1: { sees: ['rabbit1'], partitions: ['rabbit2', 'rabbit3'] }, rabbit2: { sees: ['rabbit2', 'rabbit3'] } },
          step: restart(['rabbit1'], 'partition'),
        },
        { atS: 100, says: { rabbit3: { partitions: ['rabbit1'] } }, step: wait('settling', ['rabbit1']) },
        { atS: 100 + SETTLED_S, says: { rabbit3: { partitions: ['rabbit1'] } }, step: restart(['rabbit3'], 'stale-partition') },
        { atS: 150, says: WHOLE, step: DONE },
      ],
    },
    {
      name: 'cluster up on the cluster that stale node left: rabbit1 (the side it lists) first, then rabbit3 itself',
      longOver: true,
      looks: [
        { atS: 1000, says: { rabbit3: { partitions: ['rabbit1'] } }, step: restart(['rabbit1'], 'partition') },
        { atS: 1040, says: { rabbit3: { partitions: ['rabbit1'] } }, step: wait('settling', ['rabbit1']) },
        { atS: 1040 + SETTLED_S, says: { rabbit3: { partitions: ['rabbit1'] } }, step: restart(['rabbit3'], 'stale-partition') },
        { atS: 1100, says: WHOLE, step: DONE },
      ],
    },
    {
      name: 'pause_minority: the grace first, then the smaller side',
      graceMs: AUTOHEAL_GRACE_MS,
      looks: [
        { atS: 5, says: HALVES, step: wait('grace') },
        { atS: AUTOHEAL_GRACE_MS / 1000 - 1, says: HALVES, step: wait('grace') },
        { atS: AUTOHEAL_GRACE_MS / 1000, says: HALVES, step: restart(['rabbit1'], 'partition') },
      ],
    },
    {
      name: 'autoheal ends it within the grace: nothing restarted',
      graceMs: AUTOHEAL_GRACE_MS,
      looks: [
        { atS: 5, says: HALVES, step: wait('grace') },
        { atS: 30, says: { rabbit1: 'other' }, step: wait('grace') },
        { atS: 50, says: WHOLE, step: DONE },
      ],
    },
    {
      name: 'a split nobody reports (3.10 after autoheal): watched STUCK_MS, then its smaller side',
      looks: [
        {
          atS: 0,
          says: { rabbit1: { sees: ['rabbit1', 'rabbit2'] }, rabbit2: { sees: ['rabbit1', 'rabbit2'] }, rabbit3: { sees: ['rabbit3'] } },
          step: wait('watching'),
        },
        {
          atS: STUCK_S - 1,
          says: { rabbit1: { sees: ['rabbit1', 'rabbit2'] }, rabbit2: { sees: ['rabbit1', 'rabbit2'] }, rabbit3: { sees: ['rabbit3'] } },
          step: wait('watching'),
        },
        {
          atS: STUCK_S,
          says: { rabbit1: { sees: ['rabbit1', 'rabbit2'] }, rabbit2: { sees: ['rabbit1', 'rabbit2'] }, rabbit3: { sees: ['rabbit3'] } },
          step: restart(['rabbit3'], 'split'),
        },
      ],
    },
    {
      name: 'a split that reconnects by itself within STUCK_MS: nothing restarted',
      looks: [
        { atS: 0, says: { rabbit3: { sees: ['rabbit3'] } }, step: wait('watching') },
        { atS: 10, says: WHOLE, step: DONE },
      ],
    },
    {
      name: "a node whose RabbitMQ stays stopped (pause_minority's pause outliving the partition): restarted after STUCK_MS past the grace",
      graceMs: AUTOHEAL_GRACE_MS,
      looks: [
        { atS: 0, says: { rabbit1: 'stopped', rabbit2: { sees: ['rabbit2', 'rabbit3'] }, rabbit3: { sees: ['rabbit2', 'rabbit3'] } }, step: wait('grace') },
        {
          atS: STUCK_S + 1,
          says: { rabbit1: 'stopped', rabbit2: { sees: ['rabbit2', 'rabbit3'] }, rabbit3: { sees: ['rabbit2', 'rabbit3'] } },
          step: wait('grace'),
        },
        {
          atS: AUTOHEAL_GRACE_MS / 1000,
          says: { rabbit1: 'stopped', rabbit2: { sees: ['rabbit2', 'rabbit3'] }, rabbit3: { sees: ['rabbit2', 'rabbit3'] } },
          step: restart(['rabbit1'], 'stuck'),
        },
      ],
    },
    {
      name: 'cluster up: a node stopped since before it looked is restarted at once (the fault is long over)',
      longOver: true,
      looks: [
        {
          atS: 500,
          says: { rabbit2: 'stopped', rabbit1: { sees: ['rabbit1', 'rabbit3'] }, rabbit3: { sees: ['rabbit1', 'rabbit3'] } },
          step: restart(['rabbit2'], 'stuck'),
        },
      ],
    },
    {
      name: 'a node that does not answer, without saying it is stopped or booting (paused, unreachable): watched, never restarted',
      looks: [
        { atS: 0, says: { rabbit2: 'other' }, step: wait('watching') },
        { atS: 200, says: { rabbit2: 'other' }, step: wait('watching') },
      ],
    },
    {
      name: `a boot that hangs (seen on 3.10 under load: pause_minority started the node it had paused again, and the boot never ended): restarted after BOOT_MS (${BOOT_MS / 1000} s) of booting`,
      graceMs: AUTOHEAL_GRACE_MS,
      looks: [
        { atS: 0, says: { rabbit3: 'stopped' }, step: wait('grace') },
        { atS: 20, says: { rabbit3: 'booting' }, step: wait('grace') },
        { atS: 20 + BOOT_S - 1, says: { rabbit3: 'booting' }, step: wait('watching') },
        { atS: 20 + BOOT_S, says: { rabbit3: 'booting' }, step: restart(['rabbit3'], 'hung') },
        // Its boot after the restart is counted anew: first the booting wait for the restarted node.
        { atS: 20 + BOOT_S + 30, says: { rabbit3: 'booting' }, step: wait('booting', ['rabbit3']) },
        { atS: 20 + BOOT_S + 60, says: WHOLE, step: DONE },
      ],
    },
    {
      name: 'a boot that hangs again after its restart: restarted once more, then every node, then the mend has nothing left',
      looks: [
        { atS: 0, says: { rabbit3: 'booting' }, step: wait('watching') },
        { atS: BOOT_S, says: { rabbit3: 'booting' }, step: restart(['rabbit3'], 'hung') },
        { atS: 2 * BOOT_S, says: { rabbit3: 'booting' }, step: wait('watching') },
        { atS: 3 * BOOT_S, says: { rabbit3: 'booting' }, step: restart(['rabbit3'], 'hung') },
        { atS: 4 * BOOT_S, says: { rabbit3: 'booting' }, step: wait('watching') },
        { atS: 5 * BOOT_S, says: { rabbit3: 'booting' }, step: restart(NODES3, 'everything') },
        { atS: 6 * BOOT_S, says: { rabbit3: 'booting' }, step: wait('settling', NODES3) },
        { atS: 7 * BOOT_S, says: { rabbit3: 'booting' }, step: wait('exhausted') },
      ],
    },
    {
      name: 'cluster up: a node booting at the first look may have just been started; its boot is timed from that look',
      longOver: true,
      looks: [
        { atS: 500, says: { rabbit2: 'booting' }, step: wait('watching') },
        { atS: 500 + BOOT_S - 1, says: { rabbit2: 'booting' }, step: wait('watching') },
        { atS: 500 + BOOT_S, says: { rabbit2: 'booting' }, step: restart(['rabbit2'], 'hung') },
      ],
    },
    {
      name: `a restarted node that never answers is looked past after BOOT_MS (${BOOT_MS / 1000} s)`,
      looks: [
        { atS: 0, says: { rabbit2: 'stopped' }, step: wait('watching') },
        { atS: STUCK_S, says: { rabbit2: 'stopped' }, step: restart(['rabbit2'], 'stuck') },
        { atS: STUCK_S + BOOT_MS / 1000 - 1, says: { rabbit2: 'other' }, step: wait('booting', ['rabbit2']) },
        // Stopped by its own word again: watched STUCK_MS from now, as any stopped node.
        { atS: STUCK_S + BOOT_MS / 1000, says: { rabbit2: 'stopped' }, step: wait('watching') },
        { atS: 2 * STUCK_S + BOOT_MS / 1000, says: { rabbit2: 'stopped' }, step: restart(['rabbit2'], 'stuck') },
      ],
    },
    {
      name: `no node restarted more than ${MAX_RESTARTS_PER_NODE} times: then every node at once, once; then the mend has nothing left`,
      looks: [
        { atS: 0, says: { rabbit3: { partitions: ['rabbit1'] } }, step: restart(['rabbit1'], 'partition') },
        { atS: 20, says: { rabbit3: { partitions: ['rabbit1'] } }, step: wait('settling', ['rabbit1']) },
        { atS: 20 + SETTLED_S, says: { rabbit3: { partitions: ['rabbit1'] } }, step: restart(['rabbit3'], 'stale-partition') },
        // rabbit3 came back and lists rabbit1 again (a fault that never ended, say).
        { atS: 60, says: { rabbit3: { partitions: ['rabbit1'] } }, step: wait('settling', ['rabbit3']) },
        { atS: 60 + SETTLED_S, says: { rabbit3: { partitions: ['rabbit1'] } }, step: restart(['rabbit3'], 'stale-partition') },
        { atS: 100, says: { rabbit3: { partitions: ['rabbit1'] } }, step: wait('settling', ['rabbit3']) },
        { atS: 100 + SETTLED_S, says: { rabbit3: { partitions: ['rabbit1'] } }, step: restart(NODES3, 'everything') },
        { atS: 150, says: { rabbit3: { partitions: ['rabbit1'] } }, step: wait('settling', NODES3) },
        { atS: 150 + SETTLED_S, says: { rabbit3: { partitions: ['rabbit1'] } }, step: wait('exhausted') },
      ],
    },
  ])('$name', (c) => {
    expect(run(c)).toEqual(c.looks.map((l) => l.step));
  });

  it('the reason given for each restart names the nodes and what they list', () => {
    const views = look({ rabbit3: { partitions: ['rabbit1'] } });
    expect(describeStep(restart(['rabbit3'], 'stale-partition'), views)).toBe(
      'rabbit3 lists rabbit1, already restarted: the entry is stale, kept by the node that lists it; restarting rabbit3',
    );
    expect(describeStep(restart(['rabbit1'], 'partition'), look(HALVES))).toBe(
      "a partition is reported (rabbit1 lists rabbit2, rabbit3; rabbit2 lists rabbit1; rabbit3 lists rabbit1): restarting rabbit1, the smaller side, as RabbitMQ's docs tell operators to; what it held alone is discarded",
    );
    expect(describeStep(DONE, look(WHOLE))).toContain('every node runs');
  });

  // A fault's mend watched the node stopped or booting that long; cluster up and status did not.
  it.each([
    { why: 'stuck' as const, longOver: false, text: 'RabbitMQ on rabbit3 stayed stopped 30 s with the container up: restarting it' },
    { why: 'stuck' as const, longOver: true, text: 'RabbitMQ on rabbit3 is stopped with the container up: restarting it' },
    { why: 'hung' as const, longOver: true, text: 'RabbitMQ on rabbit3 is booting without answering, by its own word: taken as hung; restarting it' },
  ])('$why, long over $longOver: $text', ({ why, longOver, text }) => {
    expect(describeStep(restart(['rabbit3'], why), look(WHOLE), { longOver })).toBe(text);
  });
});
