import type { Config } from '../config.js';
import type { Docker } from '../cluster/docker/engine.js';
import type { Leftover } from '../cluster/lifecycle/heal.js';
import type { AppliedFault, FaultContext, FaultOptions } from './applied.js';
import type { FaultKind } from './kinds.js';

/**
 * What a fault is, declared once in its own file (src/faults/<kind>.ts) and registered in
 * registry.ts, where the compiler names any kind without one. The name and the one-line
 * description are in kinds.ts, which the CLI reads without loading anything else.
 */

/**
 * What happens to the queue's leader while the fault is on, which decides what the leader-fault
 * sequence waits for (leader-fault-run.ts) and what the reports say of the election.
 *
 *   elected-away   the leader's node is gone (down, frozen, cut off, removed) and the others,
 *                  still a majority, elect a new leader while the fault is on: awaited.
 *   no-majority    the leader's node is gone and too few members are left to elect one: none is
 *                  possible until the restore (quorum-loss, kill-all).
 *   stays          the leader still reaches a majority (slowed down, or a ring or a bridge).
 *   moves-in-turn  every node in turn, the leader moving as it goes (rolling-restart).
 *
 * Every fault but `elected-away` is held at least NO_ELECTION_HOLD_MS; the wait after the
 * restore sees the queue led again.
 */
type LeaderEffect = 'elected-away' | 'no-majority' | 'stays' | 'moves-in-turn';

/** What a fault needs besides a running cluster of this project's nodes. */
interface FaultNeeds {
  /**
   * Run in the node's network namespace from the host (nsenter, and iptables or tc with that
   * queueing discipline): Linux, root, a local engine. A partition (iptables) is also mended on
   * brokers whose partitions outlive their rules (cluster/mend/partition-mend.ts).
   */
  readonly netns?: 'iptables' | 'netem' | 'tbf';
  /** The fewest nodes the cluster must have. */
  readonly nodes?: number;
  /**
   * It faults several of this project's containers at once in its own way (a partition shape,
   * quorum-loss, membership): a --fault-cmd, which faults one node at a time, cannot apply it.
   */
  readonly ownContainers?: true;
  /** It runs rabbitmqctl in this project's containers (docker exec): a --fault-cmd cannot apply it. */
  readonly ctl?: true;
}

/** The node a fault is aimed at, and what it may need to know of the queue around it. */
interface FaultTarget {
  /** Erlang name of the node: the queue's leader (chaos: the node its target resolved to). */
  readonly node: string;
  /** The queue's members (Erlang names), the node among them: quorum-loss picks its second node here. */
  readonly members: readonly string[];
  /** The vhost whose quorum queues must be whole again after a fault of the whole cluster. */
  readonly vhost: string;
  readonly options: FaultOptions;
  /** A line for people as a long fault goes (a rolling restart's nodes). */
  readonly onLine?: (line: string) => void;
}

/** A fault applied to the cluster: the fault, and the nodes it took besides target.node (Erlang names). */
interface FaultApplied {
  readonly fault: AppliedFault;
  readonly alsoFaulted: readonly string[];
}

/** One of this project's containers, for a fault the docker injector applies to it. */
interface ContainerTarget {
  readonly docker: Docker;
  readonly container: string;
  /** Short name of the node (rabbit2). */
  readonly node: string;
  /** Every node of the cluster: short name → container (a partition shape cuts links among them). */
  readonly nodes: ReadonlyMap<string, string>;
}

/** A fault as the docker injector applied it to a container: how to undo it, and what it was. */
interface ContainerFault {
  /** The heal: undoes exactly what was applied. */
  readonly undo: () => Promise<void>;
  /** performance.now() when the fault really began, when a retried call began later than the first. */
  readonly issuedAt?: number;
  /** A partition shape's groups: what the fault reads as instead of the container. */
  readonly shape?: string;
  /** A partition's cut links (short names): the split a partition that outlives them is mended by. */
  readonly cuts?: readonly (readonly [string, string])[];
}

export interface FaultSpec<K extends FaultKind = FaultKind> {
  readonly kind: K;
  readonly needs: FaultNeeds;
  readonly leader: LeaderEffect;
  /** The node is down or out of reach while the fault is on ("node down for"), not only slowed or changed ("fault held for"). */
  readonly nodeDown: boolean;
  /** What a killed run can leave behind of it (`cluster up` heals each: cluster/lifecycle/heal.ts). */
  readonly leftovers: readonly Leftover[];
  /** Its colour in the charts (a chaos run's fault bands). */
  readonly color: string;
  /**
   * A fault of one node, as the docker injector applies it to the node's container (a --fault-cmd
   * runs the user's command instead). Absent for a fault made of others (quorum-loss: two kills).
   */
  readonly onContainer?: (target: ContainerTarget, options: FaultOptions) => Promise<ContainerFault>;
  /**
   * What the cluster must be for it, checked before a run starts; throws the one-line refusal
   * (feature-flags: a stable flag left disabled). Absent: nothing beyond needs.
   */
  readonly check?: (cluster: { docker: Docker; config: Config }) => Promise<void>;
  /** Apply it to the cluster, aimed at target.node; the fault's restore() is its heal. */
  apply(ctx: FaultContext, target: FaultTarget): Promise<FaultApplied>;
}

/** apply() of a fault of one node: through the context's injector (dockerode, or the user's --fault-cmd). */
export function onOneNode<K extends FaultKind>(kind: K): FaultSpec<K>['apply'] {
  return async (ctx, target) => ({ fault: await ctx.faults.inject(target.node, kind, target.options), alsoFaulted: [] });
}
