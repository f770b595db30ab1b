import { type Config, nodeByName } from '../config.js';
import type { Docker } from '../cluster/docker/engine.js';
import type { ManagementClient } from '../cluster/broker/management.js';
import { hostRunner, netFaultsUnavailable } from '../cluster/docker/netns.js';
import { mendGraceMs, mendPartition } from '../cluster/mend/partition-mend.js';
import { EnvironmentError, NotFoundError, UsageError } from '../errors.js';
import type { Progress } from '../progress.js';
import { type AppliedFault, appliedFault, type FaultInjector } from './applied.js';
import type { FaultKind } from './kinds.js';
import { FAULTS } from './registry.js';

/**
 * How a fault of one node reaches it: dockerInjector on this project's containers (each fault's
 * own onContainer), commandInjector through the user's --fault-cmd for a cluster that runs
 * elsewhere. Both check up front what the fault needs (its spec's needs).
 */

/** A fault that needs more nodes than the cluster has (partition-ring on 3): a usage error, exit 2. */
export class FaultNeedsNodesError extends UsageError {}

/** Refuse, with one line, a fault the cluster has too few nodes for. */
export function checkFaultFitsCluster(kind: FaultKind, nodeCount: number): void {
  const needed = FAULTS[kind].needs.nodes;
  if (needed === undefined || nodeCount >= needed) return;
  throw new FaultNeedsNodesError(`'${kind}' needs a cluster of ${needed} nodes; this one has ${nodeCount}`, {
    hint: `'rmq-bench cluster reset --hard --nodes ${needed}' makes one (its data is removed)`,
  });
}

/**
 * Refuse up front, with one line, a fault this host cannot apply (exit 69): the network faults
 * need root, nsenter, iptables and tc on a Linux host with a local engine.
 */
export async function checkFaultSupported(docker: Docker, container: string, kind: FaultKind): Promise<void> {
  const netns = FAULTS[kind].needs.netns;
  if (netns === undefined) return;
  const why = await netFaultsUnavailable(docker, container, await hostRunner(), kind, netns === 'iptables' ? null : netns);
  if (why !== null) throw new EnvironmentError(why);
}

/**
 * Faults on this project's containers (a node's container: NodeSpec.container). A partition's
 * restore also ends a partition that outlives its rules (partition-mend.ts: RabbitMQ before 4.3,
 * at once with partition handling ignore, after a minute with the others).
 */
export function dockerInjector(config: Config, docker: () => Promise<Docker>, management: ManagementClient, progress: Progress): FaultInjector {
  const mended = (fault: AppliedFault, faulted: string, cuts: readonly (readonly [string, string])[]): AppliedFault => {
    if (mendGraceMs(config) === null) return fault;
    const removeRules = fault.restore.bind(fault);
    fault.restore = async () => {
      const wasOn = !fault.restored;
      await removeRules();
      if (wasOn)
        await mendPartition(
          config,
          management,
          await docker(),
          { faulted: [faulted], cuts },
          {
            log: (l) => progress.warn(l),
            info: (l) => progress.info(l),
            update: (l) => progress.update(l),
          },
        );
    };
    return fault;
  };
  return {
    kind: 'docker',
    async inject(nodeName, kind, options = {}) {
      const node = nodeByName(config, nodeName);
      if (!node)
        throw new NotFoundError(
          `${nodeName} is not one of this cluster's containers (${config.nodes.map((n) => n.name).join(', ')}); for another cluster use --fault-cmd`,
        );
      const spec = FAULTS[kind];
      if (spec.onContainer === undefined) throw new Error(`'${kind}' is not applied to one container (its spec's apply composes it)`);
      const target = { docker: await docker(), container: node.container, node: node.name, nodes: new Map(config.nodes.map((n) => [n.name, n.container])) };
      const issuedAt = performance.now();
      const r = await spec.onContainer(target, options);
      const fault = appliedFault(kind, r.shape ?? node.container, r.issuedAt ?? issuedAt, r.undo, r.shape);
      return spec.needs.netns === 'iptables' ? mended(fault, node.name, r.cuts ?? []) : fault;
    },
    async check(kind) {
      checkFaultFitsCluster(kind, config.nodes.length);
      await checkFaultSupported(await docker(), config.nodes[0]!.container, kind);
      await FAULTS[kind].check?.({ docker: await docker(), config });
    },
  };
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
    // The user's command decides what each kind means on their platform, one node at a time.
    check: async (kind) => {
      if (FAULTS[kind].needs.ownContainers)
        throw new EnvironmentError(`'${kind}' faults several of this project's containers; with --fault-cmd, fault one node at a time (kill, stop, …)`);
      if (FAULTS[kind].needs.ctl) throw new EnvironmentError(`'${kind}' runs rabbitmqctl in this project's containers; a --fault-cmd cannot apply it`);
    },
  };
}
