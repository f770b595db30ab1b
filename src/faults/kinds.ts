import type { QueueType } from '../cluster/broker/queue-types.js';

/**
 * The faults rmq-bench can apply, by name, with what the CLI needs of each before anything else
 * is loaded: its one-line description (the help and the reports print it) and the queue types it
 * means something for. No imports at run time (a type only): the commands declare
 * their options with it, and `rmq-bench --help` loads commander and nothing else. Everything
 * else a fault is (what it needs, what it does to the leader, its apply and heal, its leftovers,
 * its colour) is in its own file, src/faults/<kind>.ts, registered in registry.ts.
 */
interface FaultAbout {
  readonly description: string;
  /** About a replicated queue's members or its majority: refused on the other queue types. */
  readonly onlyOn?: readonly QueueType[];
  /**
   * It changes the cluster for good, with nothing to undo (feature-flags: a flag is never disabled
   * again): applied once per cluster. Refused where a command would apply it more than once.
   */
  readonly oneShot?: true;
}

export const FAULT_ABOUT = {
  kill: { description: 'SIGKILL the container (a crash: no clean shutdown)' },
  stop: { description: 'stop the container (SIGTERM, then SIGKILL after 10 s: a clean shutdown)' },
  pause: { description: 'freeze the container (cgroup freezer: sockets stay open, nothing answers)' },
  disconnect: { description: 'cut the container off its network (the alias is restored on reconnect)' },
  partition: { description: 'cut the node off from its cluster peers (iptables in its network namespace); its clients still reach it' },
  'partition-halves': {
    description: 'split the cluster into a minority, with the node in it, and a majority that cannot reach each other (iptables)',
  },
  'partition-ring': {
    description: '5 nodes in a ring, each reaching only its two neighbours: every node sees a majority, no two the same (iptables)',
  },
  'partition-bridge': { description: 'two halves that cannot reach each other, joined by one node that reaches both; the node in a half (iptables)' },
  latency: { description: 'delay (and optionally drop) everything the node sends (tc netem in its network namespace)' },
  'slow-link': { description: 'limit the bandwidth of everything the node sends, to its peers and its clients (tc tbf in its network namespace)' },
  'quorum-loss': {
    description: 'SIGKILL the leader and one follower: the queue (or stream) has no majority until both are back',
    // A stream's writer also needs a majority of its replicas to confirm.
    onlyOn: ['quorum', 'stream'],
  },
  'rolling-restart': {
    description: 'stop and start every node in turn (highest ordinal first), each once the cluster is whole again, as an upgrade does',
  },
  membership: {
    description: 'remove the node from the cluster (stop_app, forget_cluster_node: its queue members go) and join it again, reset, with its members grown back',
    onlyOn: ['quorum'],
  },
  'kill-all': { description: 'SIGKILL every node at once, then start them all again (a power cut of the whole rack)' },
  'feature-flags': {
    description:
      'enable, one by one, every stable feature flag the cluster left disabled (cluster up --feature-flags required), as an upgrade ends; nothing to undo, so once per cluster',
    oneShot: true,
  },
} as const satisfies Record<string, FaultAbout>;

export type FaultKind = keyof typeof FAULT_ABOUT;

/** Every fault's name, in the order the help and chaos's default list give them. */
export const FAULT_KINDS = Object.keys(FAULT_ABOUT) as readonly FaultKind[];

/** The faults that can be applied again and again (all but the one-shot ones): chaos's default list. */
export const REPEATABLE_FAULT_KINDS = FAULT_KINDS.filter((k) => !('oneShot' in FAULT_ABOUT[k]));

/** What a fault does, in one line. */
export function faultDescription(kind: FaultKind): string {
  return FAULT_ABOUT[kind].description;
}

/** Why a fault is refused on a queue type, or undefined. Pure. */
export function faultProblem(type: QueueType, fault: FaultKind | 'none'): string | undefined {
  if (fault === 'none') return undefined;
  const about: FaultAbout = FAULT_ABOUT[fault];
  if (about.onlyOn === undefined || about.onlyOn.includes(type)) return undefined;
  const on = about.onlyOn.map((t) => `a ${t} ${t === 'stream' ? '' : 'queue'}`.trimEnd()).join(' or ');
  return `--fault ${fault} is about the members of ${on}; it is not applied to a ${type} queue (use kill, stop, pause, disconnect or a partition)`;
}

/**
 * Why a one-shot fault is refused where `how` would apply it `times` times (compare: its runs
 * times its sides; chaos: again and again, Infinity), or undefined; `instead` says what applies it
 * once. Pure.
 */
export function oneShotProblem(fault: FaultKind | 'none', times: number, how: string, instead: string): string | undefined {
  if (fault === 'none' || !('oneShot' in FAULT_ABOUT[fault]) || times <= 1) return undefined;
  const often = Number.isFinite(times) ? `${times} times` : 'again and again';
  return `--fault ${fault} changes the cluster for good and is applied once per cluster; ${how} would apply it ${often} (${instead})`;
}

/** The partitions of several nodes at once (net/partition-shapes.ts draws them). */
const PARTITION_SHAPES = ['partition-halves', 'partition-ring', 'partition-bridge'] as const satisfies readonly FaultKind[];
export type PartitionShape = (typeof PARTITION_SHAPES)[number];
