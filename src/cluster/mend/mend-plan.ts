import { shortNodeName } from '../broker/queue-leadership.js';

/**
 * The mend's decisions, pure: from what each node says of the cluster, and what the mend has seen
 * and done so far, which nodes to restart next, or why to wait. partition-mend.ts carries them
 * out after a partition fault on RabbitMQ before 4.3; `cluster up` runs the same plan on a
 * cluster a run left split, and `cluster status` shows it (what status calls split, up ends).
 *
 * Why a plan of several rounds: restarting the smaller side, as RabbitMQ's docs tell operators,
 * is not always the end of it. Mnesia's node monitor keeps each node's list of partitions until
 * that node restarts or sees the partitioned node's RabbitMQ go down while it is the only side
 * left (rabbit_node_monitor:handle_dead_rabbit). Seen on 3.10.8 under load: rabbit2 and then
 * rabbit1 were restarted, and rabbit3 kept listing rabbit1 for good. Such an entry points at a
 * node that has already been restarted; restarting that node again changes nothing, restarting
 * the node that keeps the entry does. So a side whose nodes were all restarted already hands the
 * turn to the nodes that still report them; a node is restarted at most MAX_RESTARTS_PER_NODE
 * times; past that every node is restarted once, together; past that the mend waits for its
 * deadline and says the cluster is not whole.
 */

/**
 * One node's answer to /api/nodes (or, where that is silent while its RabbitMQ runs, the same read
 * from the node itself: partition-mend.ts nodeViews): what it reports of every node, or how it
 * failed to answer.
 */
export type NodeAnswer =
  | { nodes: readonly { name: string; running: boolean; partitions: readonly string[] }[] }
  /**
   * stopped: no answer, and the node itself says its RabbitMQ application is stopped, not
   * booting (rabbit-state.ts). booting: no answer, and the node says its RabbitMQ is booting.
   * other: no answer, for any other reason (slow, paused, unreachable).
   */
  | { failed: 'stopped' | 'booting' | 'other' };

/**
 * A node's answer from its own view (the nodes its Mnesia runs with, the nodes it lists as
 * partitioned from it), in the shape of /api/nodes: every node of `nodeNames`, running when the
 * view lists it, and the partitions on `self` alone (the view says nothing of the others'). Pure.
 */
export function answerFromOwnView(nodeNames: readonly string[], self: string, view: { running: readonly string[]; partitions: readonly string[] }): NodeAnswer {
  return { nodes: nodeNames.map((name) => ({ name, running: view.running.includes(name), partitions: name === self ? view.partitions : [] })) };
}

/** What the nodes report of the cluster, read from their answers. */
export interface NodeViews {
  /** Short name → the nodes it reports as partitioned from it (short names). A node that does not answer is left out. */
  partitions: Map<string, string[]>;
  /**
   * Short name → the nodes it lists as not running although they answer themselves: a split no
   * node reports as a partition (seen on 3.10 after autoheal). A node that does not answer is left out.
   */
  unseen: Map<string, string[]>;
  /** Short names of the nodes whose RabbitMQ is stopped, by their own word. */
  down: string[];
  /** Short names of the nodes that do not answer while their RabbitMQ boots, by their own word. */
  booting: string[];
  /** Every node answered and sees every node running, and none reports a partition. */
  whole: boolean;
  /** Short names of the nodes whose autoheal round is under way, by their own word (autoheal only). */
  healing: string[];
}

/** The views from each node's answer (short name → answer; full names are shortened), and the nodes autoheal is healing. Pure. */
export function readViews(answers: ReadonlyMap<string, NodeAnswer>, healing: readonly string[] = []): NodeViews {
  const partitions = new Map<string, string[]>();
  const unseen = new Map<string, string[]>();
  const down: string[] = [];
  const booting: string[] = [];
  const answering = [...answers.entries()].filter(([, a]) => 'nodes' in a).map(([name]) => name);
  let whole = answering.length === answers.size;
  for (const [name, a] of answers) {
    if (!('nodes' in a)) {
      if (a.failed === 'stopped') down.push(name);
      if (a.failed === 'booting') booting.push(name);
      continue;
    }
    const self = a.nodes.find((x) => shortNodeName(x.name) === name);
    partitions.set(name, (self?.partitions ?? []).map(shortNodeName));
    const notRunning = a.nodes.filter((x) => !x.running).map((x) => shortNodeName(x.name));
    if (notRunning.length > 0 || a.nodes.length < answers.size) whole = false;
    unseen.set(
      name,
      notRunning.filter((n) => answering.includes(n)),
    );
  }
  if ([...partitions.values()].some((p) => p.length > 0)) whole = false;
  return { partitions, unseen, down: down.sort(), booting: booting.sort(), whole, healing: [...healing].sort() };
}

/**
 * The groups a fault's cut links leave: the nodes that still reach each other, directly or
 * through another node (the connected parts of the links not cut). One group: the fault split
 * nothing whole (a bridge, a ring). Sorted. Pure.
 */
export function groupsOfCuts(nodes: readonly string[], cuts: readonly (readonly [string, string])[]): string[][] {
  const cut = new Set(cuts.map(([a, b]) => (a < b ? `${a} ${b}` : `${b} ${a}`)));
  const linked = (a: string, b: string): boolean => !cut.has(a < b ? `${a} ${b}` : `${b} ${a}`);
  const groups: string[][] = [];
  const seen = new Set<string>();
  for (const start of [...nodes].sort()) {
    if (seen.has(start)) continue;
    const group: string[] = [];
    const todo = [start];
    seen.add(start);
    while (todo.length > 0) {
      const n = todo.pop()!;
      group.push(n);
      for (const m of nodes) {
        if (seen.has(m) || !linked(n, m)) continue;
        seen.add(m);
        todo.push(m);
      }
    }
    groups.push(group.sort());
  }
  return groups;
}

/**
 * The nodes to restart: the smaller side of the split the nodes report.
 *
 * Where the fault's groups are known (`groups`: the mend after a fault, groupsOfCuts), a reported
 * partition between two of them is read as the fault's split, and the smallest group it involves
 * is the side, even while the reports are partial. Seen on 3.10.8 under load: just after the
 * heal, the cut-off rabbit1 and rabbit2 listed each other and rabbit3 had not noticed yet; read
 * alone, rabbit1's report puts rabbit3 on its side, and rabbit2, of the majority, would be
 * restarted.
 *
 * Otherwise (cluster up: the fault long over), from the one node that reports the most (itself
 * and the nodes it is not partitioned from, against the nodes it is). On a tie the side holding a
 * node of `prefer` (the nodes the fault was aimed at), else the side that node reports against.
 * Empty when no node reports a partition. A node that alone notices (Mnesia marks the partition
 * where it finds the other side inconsistent) is enough. Pure.
 */
export function sideToRestart(
  views: ReadonlyMap<string, readonly string[]>,
  options: { prefer?: readonly string[]; groups?: readonly (readonly string[])[] } = {},
): string[] {
  const prefer = options.prefer ?? [];
  const groups = options.groups ?? [];
  if (groups.length > 1) {
    const groupOf = (n: string): readonly string[] | undefined => groups.find((g) => g.includes(n));
    const involved = new Set<readonly string[]>();
    for (const [reporter, listed] of views)
      for (const other of listed) {
        const [a, b] = [groupOf(reporter), groupOf(other)];
        if (a && b && a !== b) involved.add(a).add(b);
      }
    const side = [...involved].sort((a, b) => a.length - b.length || Number(prefer.some((n) => b.includes(n))) - Number(prefer.some((n) => a.includes(n))))[0];
    if (side) return [...side].sort();
  }
  const all = [...views.keys()];
  const [reporter, against] = [...views.entries()].filter(([, p]) => p.length > 0).sort((a, b) => b[1].length - a[1].length)[0] ?? [];
  if (reporter === undefined || against === undefined) return [];
  const other = [...new Set(against)].filter((n) => n !== reporter);
  const own = [...new Set([reporter, ...all.filter((n) => !other.includes(n))])];
  if (own.length !== other.length) return (own.length < other.length ? own : other).sort();
  return (prefer.some((n) => own.includes(n)) ? own : other).sort();
}

/** The nodes that list one of `listed` (a partition, or as not running), other than those. Pure. */
function reportersOf(views: ReadonlyMap<string, readonly string[]>, listed: readonly string[]): string[] {
  return [...views.entries()]
    .filter(([name, l]) => !listed.includes(name) && l.some((n) => listed.includes(n)))
    .map(([name]) => name)
    .sort();
}

/** How long a node's RabbitMQ may stay stopped (container up) after the fault before it is restarted. */
export const STUCK_MS = 30_000;

/** The nodes down since STUCK_MS or more before `now` (performance.now() readings). Pure. */
export function stuckNodes(downSince: ReadonlyMap<string, number>, now: number): string[] {
  return [...downSince.entries()]
    .filter(([, since]) => now - since >= STUCK_MS)
    .map(([name]) => name)
    .sort();
}

/** How many times the mend restarts one node before it restarts them all together. */
export const MAX_RESTARTS_PER_NODE = 2;

/**
 * What the mend gives a restarted node to answer again before it looks past it; and any node
 * whose RabbitMQ says it is booting, before the boot is taken as hung and the node restarted.
 * Seen on 3.10.8 under load: pause_minority started RabbitMQ again on the node it had paused, once
 * the partition ended, and the boot never finished (its log stopped after global's "Faking
 * nodedown/nodeup"); the node said it was booting 10 minutes on.
 */
export const BOOT_MS = 150_000;

/** What the mend gives the nodes, once every restarted node answers, to find each other again before it judges. */
export const SETTLE_MS = 15_000;

/**
 * How long autoheal's rounds are left alone: no restart is made while a node says a round is under
 * way, and the cluster is not whole until none does. Past this, the mend acts as if none did.
 * Seen on 3.10.8: rounds of about a minute each, one after another while restarts went on beside
 * them.
 */
export const HEALING_MS = 240_000;

/** What the mend has seen and done so far (performance.now() readings; -Infinity: for as long as anyone knows). */
export interface MendMemory {
  /** When the watch began: the fault's rules removed. -Infinity: the fault is long over (cluster up, cluster status). */
  startedAt: number;
  /** Node → since when its RabbitMQ has been stopped, by its own word. */
  downSince: ReadonlyMap<string, number>;
  /** Node → since when it has not answered while its RabbitMQ boots, by its own word (counted anew after a restart). */
  bootingSince: ReadonlyMap<string, number>;
  /** Since when nodes have answered without seeing each other running, with no partition reported. */
  splitSince: number | undefined;
  /** Every restart the mend made, in order ('everything': every node at once). */
  restarts: readonly { nodes: readonly string[]; at: number; why: MendWhy }[];
  /** Node → when it first answered after its last restart (absent: not since). */
  backAt: ReadonlyMap<string, number>;
  /** Since when some node has said an autoheal round is under way, without a look in between where none did. */
  healingSince: number | undefined;
}

/** The memory of a mend that starts watching at `now`. Pure. */
export function startMemory(now: number): MendMemory {
  return { startedAt: now, downSince: new Map(), bootingSince: new Map(), splitSince: undefined, restarts: [], backAt: new Map(), healingSince: undefined };
}

/**
 * The memory of a look at a cluster whose fault is long over (`cluster up`, `cluster status`):
 * whatever the nodes show now has been so for as long as anyone knows; but a node that boots may
 * have just been started (`cluster up` starts the nodes), so its boot is timed from this look, `now`,
 * and so is an autoheal round under way. Pure.
 */
export function longOverMemory(views: NodeViews, now: number): MendMemory {
  return {
    ...observe(startMemory(Number.NEGATIVE_INFINITY), views, Number.NEGATIVE_INFINITY),
    bootingSince: new Map(views.booting.map((n) => [n, now])),
    healingSince: views.healing.length > 0 ? now : undefined,
  };
}

/** Whether some node answers but does not see another running, with no partition reported. */
function splitUnreported(views: NodeViews): boolean {
  return [...views.unseen.values()].some((u) => u.length > 0);
}

/** The memory after a look at `now`. Pure. */
export function observe(memory: MendMemory, views: NodeViews, now: number): MendMemory {
  const downSince = new Map<string, number>();
  for (const name of views.down) downSince.set(name, memory.downSince.get(name) ?? now);
  const bootingSince = new Map<string, number>();
  for (const name of views.booting) bootingSince.set(name, memory.bootingSince.get(name) ?? now);
  const backAt = new Map(memory.backAt);
  for (const name of views.partitions.keys()) if (!backAt.has(name)) backAt.set(name, now);
  return {
    ...memory,
    downSince,
    bootingSince,
    splitSince: splitUnreported(views) ? (memory.splitSince ?? now) : undefined,
    backAt,
    healingSince: views.healing.length > 0 ? (memory.healingSince ?? now) : undefined,
  };
}

/** The memory after the mend restarted `nodes` at `now`: they have not answered since. Pure. */
export function restarted(memory: MendMemory, nodes: readonly string[], why: MendWhy, now: number): MendMemory {
  const backAt = new Map(memory.backAt);
  const bootingSince = new Map(memory.bootingSince);
  for (const n of nodes) {
    backAt.delete(n);
    bootingSince.delete(n);
  }
  return { ...memory, restarts: [...memory.restarts, { nodes, at: now, why }], backAt, bootingSince };
}

/** Why nodes are restarted. */
export type MendWhy =
  /** The smaller side of a partition a node reports. */
  | 'partition'
  /** Nodes that still report a partition with nodes already restarted: the entry is their own, and stale. */
  | 'stale-partition'
  /** Nodes that answer but do not see each other running, with no partition reported, for STUCK_MS. */
  | 'split'
  /** A node whose RabbitMQ has stayed stopped STUCK_MS with its container up. */
  | 'stuck'
  /** A node whose RabbitMQ has said it is booting for BOOT_MS without answering: the boot hung. */
  | 'hung'
  /** Every node at once: the nodes restarted one by one as often as the plan allows, and the cluster still not whole. */
  | 'everything';

export type MendStep =
  | { action: 'done' }
  | {
      action: 'wait';
      /**
       * booting: a restarted node does not answer yet. settling: the restarted nodes answer, and
       * are given SETTLE_MS to find each other. grace: pause_minority or autoheal given their time
       * to end it themselves. watching: nothing to act on yet (a split or a stopped node younger
       * than STUCK_MS, nodes not answering). exhausted: every restart the plan allows was made.
       * healing: autoheal's round is under way on `nodes` (for up to HEALING_MS).
       */
      why: 'booting' | 'settling' | 'grace' | 'watching' | 'exhausted' | 'healing';
      /** The nodes waited for (booting, settling). */
      nodes: string[];
    }
  | { action: 'restart'; nodes: string[]; why: MendWhy };

interface MendSettings {
  /** What pause_minority or autoheal are given to end a partition themselves (0: ignore, or the fault long over). */
  graceMs: number;
  /** Every node of the cluster (short names). */
  nodes: readonly string[];
  /** The nodes the fault was aimed at: restarted first on a tie. */
  faulted?: readonly string[];
  /** The links the fault cut (short names): a reported partition is read as the split they make. */
  cuts?: readonly (readonly [string, string])[];
}

/** How many times the mend restarted `node`. Pure. */
function restartsOf(memory: MendMemory, node: string): number {
  return memory.restarts.filter((r) => r.nodes.includes(node)).length;
}

/**
 * The next step. `views` must be the look `memory` last observed. Pure.
 *
 * In order: whole, with no autoheal round under way → done; a round under way (for up to
 * HEALING_MS) → wait; a restarted node that does not answer yet (for up to BOOT_MS) →
 * wait; the restarted nodes answer since less than SETTLE_MS → wait; within the grace → wait;
 * then a reported partition restarts the smaller side, or, where every node of that side was
 * restarted already, the nodes that still report it (their entry is stale); a split nobody
 * reports, older than STUCK_MS, the same with the nodes that do not see each other; a node
 * stopped STUCK_MS is restarted, and one booting BOOT_MS without answering. A node is restarted at most MAX_RESTARTS_PER_NODE times; when
 * the step would need more, every node is restarted at once, once.
 */
export function planMend(memory: MendMemory, views: NodeViews, now: number, settings: MendSettings): MendStep {
  const healing = views.healing.length > 0 && now - (memory.healingSince ?? now) < HEALING_MS;
  if (views.whole && !healing) return { action: 'done' };
  if (healing) return { action: 'wait', why: 'healing', nodes: [...views.healing] };
  const last = memory.restarts.at(-1);
  if (last) {
    const booting = last.nodes.filter((n) => !memory.backAt.has(n));
    if (booting.length > 0 && now - last.at < BOOT_MS) return { action: 'wait', why: 'booting', nodes: booting };
    const backLast = Math.max(last.at, ...last.nodes.map((n) => memory.backAt.get(n) ?? last.at));
    if (now - backLast < SETTLE_MS) return { action: 'wait', why: 'settling', nodes: [...last.nodes] };
  }
  if (now - memory.startedAt < settings.graceMs) return { action: 'wait', why: 'grace', nodes: [] };

  const faulted = settings.faulted ?? [];
  const groups = groupsOfCuts(settings.nodes, settings.cuts ?? []);
  const wanted = ((): { nodes: string[]; why: MendWhy } | undefined => {
    for (const [map, why] of [
      [views.partitions, 'partition'],
      [views.unseen, 'split'],
    ] as const) {
      if (why === 'split' && (memory.splitSince === undefined || now - memory.splitSince < STUCK_MS)) continue;
      const side = sideToRestart(map, { prefer: faulted, groups });
      if (side.length === 0) continue;
      const fresh = side.filter((n) => restartsOf(memory, n) === 0);
      if (fresh.length > 0) return { nodes: fresh, why };
      // Every node of that side was restarted, and is still reported: the reports are stale.
      const reporters = reportersOf(map, side);
      if (reporters.length > 0) return { nodes: reporters, why: why === 'partition' ? 'stale-partition' : 'split' };
      return { nodes: side, why };
    }
    const stuck = stuckNodes(memory.downSince, now);
    if (stuck.length > 0) return { nodes: stuck, why: 'stuck' };
    const hung = [...memory.bootingSince.entries()]
      .filter(([, since]) => now - since >= BOOT_MS)
      .map(([name]) => name)
      .sort();
    return hung.length > 0 ? { nodes: hung, why: 'hung' } : undefined;
  })();
  if (wanted === undefined) return { action: 'wait', why: 'watching', nodes: [] };
  if (wanted.nodes.every((n) => restartsOf(memory, n) < MAX_RESTARTS_PER_NODE)) return { action: 'restart', ...wanted };
  if (!memory.restarts.some((r) => r.why === 'everything')) return { action: 'restart', nodes: [...settings.nodes].sort(), why: 'everything' };
  return { action: 'wait', why: 'exhausted', nodes: [] };
}

/**
 * One line for people: what the plan does next and why. longOver: the plan of a fault long over
 * (cluster up, cluster status), where how long a node has been stopped or booting is not known. Pure.
 */
export function describeStep(step: MendStep, views: NodeViews, { longOver = false }: { longOver?: boolean } = {}): string {
  if (step.action === 'done') return 'every node runs and sees every other, and none reports a partition';
  if (step.action === 'wait') {
    switch (step.why) {
      case 'booting':
        return `waiting for ${step.nodes.join(', ')} to answer after the restart`;
      case 'settling':
        return `giving ${step.nodes.join(', ')} ${SETTLE_MS / 1000} s to find the other nodes`;
      case 'grace':
        return 'giving the partition handling time to end the partition itself';
      case 'exhausted':
        return 'every restart the mend makes was made, and the cluster is not whole';
      case 'watching':
        return 'watching the nodes reconnect';
      case 'healing':
        return `autoheal's round is under way on ${step.nodes.join(', ')}: leaving it to end the partition`;
    }
  }
  const list = step.nodes.join(', ');
  const reported = (names: readonly string[], map: ReadonlyMap<string, readonly string[]>): string =>
    names
      .map((n) => `${n} lists ${(map.get(n) ?? []).join(', ') || 'none'}`)
      .filter((s) => !s.endsWith('none'))
      .join('; ');
  switch (step.why) {
    case 'partition': {
      const reporters = [...views.partitions.entries()].filter(([, p]) => p.length > 0).map(([n]) => n);
      return `a partition is reported (${reported(reporters, views.partitions)}): restarting ${list}, the smaller side, as RabbitMQ's docs tell operators to; what it held alone is discarded`;
    }
    case 'stale-partition':
      return `${reported(step.nodes, views.partitions)}, already restarted: the entry is stale, kept by the node that lists it; restarting ${list}`;
    case 'split':
      return `the nodes answer but do not all see each other running, with no partition reported (${reported(
        [...views.unseen.keys()],
        views.unseen,
      )} as not running): restarting ${list}`;
    case 'stuck':
      return `RabbitMQ on ${list} ${longOver ? 'is stopped' : `stayed stopped ${STUCK_MS / 1000} s`} with the container up: restarting ${step.nodes.length === 1 ? 'it' : 'them'}`;
    case 'hung':
      return `RabbitMQ on ${list} ${longOver ? 'is booting' : `has been booting ${BOOT_MS / 1000} s`} without answering, by its own word: ${longOver ? 'taken as hung' : 'the boot hung'}; restarting ${step.nodes.length === 1 ? 'it' : 'them'}`;
    case 'everything':
      return `the cluster is still not whole after restarting nodes one by one: restarting every node (${list}) at once`;
  }
}
