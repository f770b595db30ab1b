import { EnvironmentError, errorMessage, UsageError } from '../errors.js';
import type { Docker } from '../cluster/engine.js';
import { type FaultKind, isPartitionShape, type PartitionShape } from './kinds.js';
import { applyCuts, planShapeFrom, SHAPE_MIN_NODES, type ShapePlan } from './net/partition-shapes.js';
import { retryTransient } from '../util/retry.js';
import { DEFAULT_BANDWIDTH } from './net/netem.js';
import { applyNetem, applyPartition, applyTbf, DEFAULT_NETEM, hostRunner, type NetemSpec, netFaultsUnavailable } from '../cluster/netns.js';

export { FAULT_KINDS, type FaultKind } from './kinds.js';

export const FAULT_DESCRIPTIONS: Record<FaultKind, string> = {
  kill: 'SIGKILL the container (a crash: no clean shutdown)',
  stop: 'stop the container (SIGTERM, then SIGKILL after 10 s: a clean shutdown)',
  pause: 'freeze the container (cgroup freezer: sockets stay open, nothing answers)',
  disconnect: 'cut the container off its network (the alias is restored on reconnect)',
  partition: 'cut the node off from its cluster peers (iptables in its network namespace); its clients still reach it',
  'partition-halves': 'split the cluster into a minority, with the node in it, and a majority that cannot reach each other (iptables)',
  'partition-ring': '5 nodes in a ring, each reaching only its two neighbours: every node sees a majority, no two the same (iptables)',
  'partition-bridge': 'two halves that cannot reach each other, joined by one node that reaches both; the node in a half (iptables)',
  latency: 'delay (and optionally drop) everything the node sends (tc netem in its network namespace)',
  'slow-link': 'limit the bandwidth of everything the node sends, to its peers and its clients (tc tbf in its network namespace)',
  'quorum-loss': 'SIGKILL the leader and one follower: the queue has no majority until both are back',
  membership: 'remove the node from the cluster (stop_app, forget_cluster_node: its queue members go) and join it again, reset, with its members grown back',
  'rolling-restart': 'stop and start every node in turn (highest ordinal first), each once the cluster is whole again, as an upgrade does',
};

/** Faults applied inside the node's network namespace from the host (nsenter): Linux, root, a local engine. */
export const NET_FAULT_KINDS: readonly FaultKind[] = ['partition', 'partition-halves', 'partition-ring', 'partition-bridge', 'latency', 'slow-link'];

/** What some faults take besides the node: latency's delay and loss. */
export interface FaultOptions {
  netem?: NetemSpec;
  /** slow-link's rate, as tc takes it (256kbit); default DEFAULT_BANDWIDTH. */
  bandwidth?: string;
  /** The partition shapes' draw in [0, 1) (chaos passes its seeded pick); default Math.random(). */
  pick?: number;
}

/** A fault applied to one node's container; restore() undoes it, once. */
export interface AppliedFault {
  readonly kind: FaultKind;
  readonly container: string;
  /** performance.now() when the fault call was issued (a stop takes seconds to return). */
  readonly issuedAt: number;
  /** performance.now() when the fault call returned. */
  readonly appliedAt: number;
  /** Wall-clock time of the same moment. */
  readonly appliedAtIso: string;
  restored: boolean;
  restore(): Promise<void>;
}

interface NetworkAttachment {
  network: string;
  aliases: string[];
  ipv4: string | undefined;
}

/**
 * Refuse up front, with one line, a fault this host cannot apply (exit 69): the network faults
 * need root, nsenter, iptables and tc on a Linux host with a local engine.
 */
export async function checkFaultSupported(docker: Docker, container: string, kind: FaultKind): Promise<void> {
  if (!NET_FAULT_KINDS.includes(kind)) return;
  const why = await netFaultsUnavailable(docker, container, await hostRunner(), kind);
  if (why !== null) throw new EnvironmentError(why);
}

/** A fault that needs more nodes than the cluster has (partition-ring on 3): a usage error, exit 2. */
export class FaultNeedsNodesError extends UsageError {}

/** Refuse, with one line, a fault the cluster has too few nodes for. */
export function checkFaultFitsCluster(kind: FaultKind, nodeCount: number): void {
  if (!isPartitionShape(kind) || nodeCount >= SHAPE_MIN_NODES[kind]) return;
  throw new FaultNeedsNodesError(`'${kind}' needs a cluster of ${SHAPE_MIN_NODES[kind]} nodes; this one has ${nodeCount}`, {
    hint: `'rmq-bench cluster reset --hard --nodes ${SHAPE_MIN_NODES[kind]}' makes one (its data is removed)`,
  });
}

/** Apply a fault to a container with dockerode (and nsenter for the network faults). */
export async function injectFault(docker: Docker, container: string, kind: FaultKind, options: FaultOptions = {}): Promise<AppliedFault> {
  const c = docker.getContainer(container);
  let issuedAt = performance.now();
  let undo: () => Promise<void>;
  switch (kind) {
    case 'kill':
      await c.kill({ signal: 'SIGKILL' });
      undo = () => startAgain(c, container);
      break;
    case 'stop':
      await c.stop({ t: 10 });
      undo = () => startAgain(c, container);
      break;
    case 'pause':
      // A retried freeze began at its last attempt: the election is timed from there.
      issuedAt = await pauseWithRetry(c);
      undo = async () => {
        await c.unpause();
      };
      break;
    case 'disconnect': {
      const info = await c.inspect();
      const attachments: NetworkAttachment[] = Object.entries(info.NetworkSettings.Networks ?? {}).map(([network, ep]) => ({
        network,
        aliases: (ep.Aliases ?? []).filter((a: string) => a !== info.Id.slice(0, 12)),
        ipv4: ep.IPAMConfig?.IPv4Address || undefined,
      }));
      for (const a of attachments) await docker.getNetwork(a.network).disconnect({ Container: info.Id, Force: true });
      undo = async () => {
        for (const a of attachments) {
          await docker.getNetwork(a.network).connect({
            Container: info.Id,
            EndpointConfig: { Aliases: Array.from(new Set([...a.aliases, container])), ...(a.ipv4 ? { IPAMConfig: { IPv4Address: a.ipv4 } } : {}) },
          });
        }
      };
      break;
    }
    case 'partition':
      undo = await applyPartition(docker, container, await hostRunner());
      break;
    case 'latency':
      undo = await applyNetem(docker, container, await hostRunner(), options.netem ?? DEFAULT_NETEM);
      break;
    case 'slow-link':
      undo = await applyTbf(docker, container, await hostRunner(), options.bandwidth ?? DEFAULT_BANDWIDTH);
      break;
    case 'quorum-loss':
      // Two nodes, not one: faultLeader kills the leader and a follower and combines the two.
      throw new Error("'quorum-loss' is applied to a queue's leader and a follower (faultLeader), not to one container");
    case 'membership':
      throw new Error("'membership' needs the management API and a peer (injectMembership), not one container alone");
    case 'rolling-restart':
      throw new Error("'rolling-restart' restarts every node in turn (startRollingRestart), not one container");
    case 'partition-halves':
    case 'partition-ring':
    case 'partition-bridge':
      throw new Error(`'${kind}' cuts links between several nodes (injectPartitionShape), not one container off`);
  }
  return appliedFault(kind, container, issuedAt, undo);
}

/** A partition shape as applied: the fault, and the shape drawn (which links were cut). */
export interface AppliedShape extends AppliedFault {
  readonly plan: ShapePlan;
}

/** The links a partition shape cut, for people ("rabbit2 rabbit4 | rabbit1 rabbit3 rabbit5"); null for the other faults. */
export function shapeOf(fault: AppliedFault): string | null {
  return 'plan' in fault ? (fault as AppliedShape).plan.text : null;
}

/**
 * Cut the links of a partition shape drawn around `target` (a short name) among `nodes` (short
 * name → container). The fault's container reads as the shape ("rabbit2 rabbit4 | rabbit1 …").
 */
export async function injectPartitionShape(
  docker: Docker,
  kind: PartitionShape,
  target: string,
  nodes: ReadonlyMap<string, string>,
  pick: number = Math.random(),
): Promise<AppliedShape> {
  const plan = planShapeFrom(kind, [...nodes.keys()], target, pick);
  const issuedAt = performance.now();
  const undo = await applyCuts(docker, plan.cuts, nodes, await hostRunner());
  return Object.assign(appliedFault(kind, plan.text, issuedAt, undo), { plan });
}

/**
 * Start a container that was killed or stopped. Right after the kill the engine may still be
 * tearing down the old process's ports and network endpoint, and on a busy machine a start then
 * fails (the engine's 500); it is tried up to START_ATTEMPTS times, START_RETRY_MS apart, and the
 * error names every attempt's reason.
 */
export const START_ATTEMPTS = 5;
export const START_RETRY_MS = 1_000;

export async function startAgain(
  c: { start(): Promise<unknown> },
  container: string,
  sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
): Promise<void> {
  const status = (err: unknown) => (err as { statusCode?: number }).statusCode;
  await retryTransient(
    async () => {
      try {
        await c.start();
      } catch (err) {
        // 304: already started (a start that did go through before its answer was lost).
        if (status(err) !== 304) throw err;
      }
    },
    {
      attempts: START_ATTEMPTS,
      intervalMs: START_RETRY_MS,
      // Only the engine's own failure is worth another try (not a 404: no such container).
      isTransient: (err) => status(err) === 500,
      giveUp: (errors) => new Error(`could not start ${container} (${errors.length} attempts: ${errors.map(errorMessage).join('; ')})`),
      sleep,
    },
  );
}

/**
 * The cgroup freezer gives up ("OCI runtime pause failed: unable to freeze") when a process of
 * the container does not stop in time, typically one blocked in the kernel on disk I/O (an
 * fsync) on a busy machine, such as one running two clusters. The next attempt usually
 * succeeds: try up to PAUSE_ATTEMPTS times, 500 ms apart, before reporting it. Resolves with
 * performance.now() at the start of the attempt that froze it: when the fault really began.
 */
export const PAUSE_ATTEMPTS = 10;

export async function pauseWithRetry(c: { pause(): Promise<unknown> }, sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))): Promise<number> {
  return retryTransient(
    async () => {
      const startedAt = performance.now();
      await c.pause();
      return startedAt;
    },
    { attempts: PAUSE_ATTEMPTS, intervalMs: 500, isTransient: (err) => /unable to freeze/i.test(errorMessage(err)), sleep },
  );
}

/** The record of a fault that has just been applied; restore() runs undo once. */
function appliedFault(kind: FaultKind, container: string, issuedAt: number, undo: () => Promise<void>): AppliedFault {
  const fault: AppliedFault = {
    kind,
    container,
    issuedAt,
    appliedAt: performance.now(),
    appliedAtIso: new Date().toISOString(),
    restored: false,
    async restore() {
      if (fault.restored) return;
      await undo();
      fault.restored = true;
    },
  };
  return fault;
}

/** Two faults applied together (quorum-loss: the leader and a follower killed) as one; restore undoes both. */
export function combineFaults(kind: FaultKind, faults: readonly AppliedFault[]): AppliedFault {
  const first = faults[0]!;
  const fault: AppliedFault = {
    kind,
    container: faults.map((f) => f.container).join('+'),
    issuedAt: first.issuedAt,
    appliedAt: faults.at(-1)!.appliedAt,
    appliedAtIso: faults.at(-1)!.appliedAtIso,
    restored: false,
    async restore() {
      if (fault.restored) return;
      // Every one is tried; the first failure is the one reported.
      const errors: unknown[] = [];
      for (const f of faults) await f.restore().catch((err: unknown) => errors.push(err));
      if (errors.length > 0) throw errors[0];
      fault.restored = true;
    },
  };
  return fault;
}

/**
 * Undo a fault, logging (not throwing) a failure when another error is already on its way:
 * the original error is the one the user must see.
 */
export async function restoreQuietly(fault: AppliedFault, log: (line: string) => void): Promise<void> {
  try {
    await fault.restore();
  } catch (err) {
    log(`could not restore ${fault.container} after '${fault.kind}': ${errorMessage(err)}`);
  }
}

/**
 * How a fault reaches a node: through dockerode on this project's containers, or through a
 * user's command for a cluster that runs elsewhere (kubectl, ssh, a cloud CLI).
 */
export interface FaultInjector {
  readonly kind: 'docker' | 'command';
  /** nodeName: the Erlang node name the management API reports (rabbit@rabbit2). */
  inject(nodeName: string, kind: FaultKind, options?: FaultOptions): Promise<AppliedFault>;
  /** Throws (EnvironmentError, exit 69) when this injector cannot apply kind here: called before a run starts. */
  check(kind: FaultKind): Promise<void>;
}

/** '{node}' → the Erlang node name, '{host}' → its host part, '{fault}' → the fault kind. Pure. */
export function expandFaultCommand(template: string, nodeName: string, kind: FaultKind): string {
  const host = nodeName.includes('@') ? nodeName.slice(nodeName.indexOf('@') + 1) : nodeName;
  return template.replaceAll('{node}', nodeName).replaceAll('{host}', host).replaceAll('{fault}', kind);
}

export function commandInjector(faultCmd: string, restoreCmd: string | undefined, run: (command: string) => Promise<void>): FaultInjector {
  return {
    kind: 'command',
    async inject(nodeName, kind) {
      const host = nodeName.includes('@') ? nodeName.slice(nodeName.indexOf('@') + 1) : nodeName;
      const issuedAt = performance.now();
      await run(expandFaultCommand(faultCmd, nodeName, kind));
      return appliedFault(kind, host, issuedAt, async () => {
        // Without --restore-cmd the platform is expected to heal the node itself (a pod restart).
        if (restoreCmd) await run(expandFaultCommand(restoreCmd, nodeName, kind));
      });
    },
    // The user's command decides what each kind means on their platform; quorum-loss needs two nodes of ours.
    check: async (kind) => {
      if (kind === 'quorum-loss' || kind === 'membership' || isPartitionShape(kind))
        throw new EnvironmentError(`'${kind}' faults several of this project's containers; with --fault-cmd, fault one node at a time (kill, stop, …)`);
    },
  };
}
