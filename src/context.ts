import { nodeByName, type Config } from './config.js';
import type { ClusterContext } from './cluster/cluster-ctx.js';
import { isPartitionShape } from './cluster/fault-kinds.js';
import { checkFaultFitsCluster, checkFaultSupported, injectFault, injectPartitionShape, type FaultInjector } from './cluster/faults.js';
import { NotFoundError } from './errors.js';
import { createComposeClient, type ComposeClient } from './cluster/compose.js';
import { connectEngine, type Docker } from './cluster/engine.js';
import { ManagementClient } from './cluster/management.js';
import type { Progress } from './progress.js';
import type { Checkpoint, CheckpointRunner } from './checkpoint.js';

/**
 * What a command hands to a scenario: what the cluster functions take (configuration, the
 * clients opened lazily, progress, Ctrl+C, faults, log lines: ClusterContext), and checkpoints.
 */
export interface Context extends ClusterContext {
  /** A checkpoint of the run: the user's --checkpoint-cmd runs here (its output on stderr); nothing without one. */
  checkpoint(point: Checkpoint): Promise<void>;
}

export interface ContextOverrides {
  management?: ManagementClient;
  faults?: FaultInjector;
  checkpoint?: CheckpointRunner;
}

export function createContext(config: Config, progress: Progress, signal: AbortSignal, overrides: ContextOverrides = {}): Context {
  let docker: Promise<Docker> | undefined;
  let compose: Promise<ComposeClient> | undefined;
  const getDocker = (): Promise<Docker> => (docker ??= connectEngine());
  return {
    config,
    progress,
    signal,
    management: overrides.management ?? ManagementClient.fromConfig(config),
    docker: getDocker,
    compose: () => (compose ??= createComposeClient(config)),
    faults: overrides.faults ?? dockerInjector(config, getDocker),
    log: (line) => progress.warn(line),
    async checkpoint(point) {
      const run = overrides.checkpoint;
      if (!run) return;
      progress.update(`${point.name} ${point.queue}: running --checkpoint-cmd`);
      const output = await run(point, signal);
      for (const line of output.split('\n').filter((l) => l.trim() !== '')) progress.info(`checkpoint ${point.name}: ${line}`);
    },
  };
}

/** Faults on this project's containers (a node's container: NodeSpec.container). */
function dockerInjector(config: Config, docker: () => Promise<Docker>): FaultInjector {
  return {
    kind: 'docker',
    async inject(nodeName, kind, options) {
      const node = nodeByName(config, nodeName);
      if (!node)
        throw new NotFoundError(
          `${nodeName} is not one of this cluster's containers (${config.nodes.map((n) => n.name).join(', ')}); for another cluster use --fault-cmd`,
        );
      if (isPartitionShape(kind)) {
        return injectPartitionShape(await docker(), kind, node.name, new Map(config.nodes.map((n) => [n.name, n.container])), options?.pick);
      }
      return injectFault(await docker(), node.container, kind, options);
    },
    async check(kind) {
      checkFaultFitsCluster(kind, config.nodes.length);
      await checkFaultSupported(await docker(), config.nodes[0]!.container, kind);
    },
  };
}
