import { nodeByName, type Config } from './config.js';
import type { ClusterContext } from './cluster/cluster-ctx.js';
import { isPartitionShape } from './faults/kinds.js';
import { type AppliedFault, checkFaultFitsCluster, checkFaultSupported, injectFault, injectPartitionShape, type FaultInjector } from './faults/injector.js';
import { mendGraceMs, mendPartition } from './cluster/partition-mend.js';
import { NotFoundError } from './errors.js';
import { createComposeClient, type ComposeClient } from './cluster/compose.js';
import { connectEngine, type Docker } from './cluster/engine.js';
import { ManagementClient } from './cluster/management.js';
import type { Progress } from './progress.js';
import type { Checkpoint, CheckpointRunner } from './checkpoint.js';
import { type BrokerInfo, readBrokerInfo } from './cluster/broker-info.js';

/**
 * What a command hands to a scenario: what the cluster functions take (configuration, the
 * clients opened lazily, progress, Ctrl+C, faults, log lines: ClusterContext), and checkpoints.
 */
export interface Context extends ClusterContext {
  /** A checkpoint of the run: the user's --checkpoint-cmd runs here (its output on stderr); nothing without one. */
  checkpoint(point: Checkpoint): Promise<void>;
  /**
   * The broker's version, asked of the management API once it answers (remembered from then on);
   * null while no node answers. Every --json document names it; version-gated features check it.
   */
  broker(): Promise<BrokerInfo | null>;
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
  const management = overrides.management ?? ManagementClient.fromConfig(config);
  let broker: BrokerInfo | undefined;
  return {
    config,
    progress,
    signal,
    management,
    async broker() {
      if (broker) return broker;
      try {
        broker = await readBrokerInfo(management);
        return broker;
      } catch {
        return null;
      }
    },
    docker: getDocker,
    compose: () => (compose ??= createComposeClient(config)),
    faults: overrides.faults ?? dockerInjector(config, getDocker, management, progress),
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

/**
 * Faults on this project's containers (a node's container: NodeSpec.container). A partition's
 * restore also ends a partition that outlives its rules (partition-mend.ts: RabbitMQ before 4.3,
 * at once with partition handling ignore, after a minute with the others).
 */
function dockerInjector(config: Config, docker: () => Promise<Docker>, management: ManagementClient, progress: Progress): FaultInjector {
  const mended = (fault: AppliedFault, faulted: string): AppliedFault => {
    if (mendGraceMs(config) === null) return fault;
    const removeRules = fault.restore.bind(fault);
    fault.restore = async () => {
      const wasOn = !fault.restored;
      await removeRules();
      if (wasOn)
        await mendPartition(config, management, await docker(), [faulted], {
          log: (l) => progress.warn(l),
          info: (l) => progress.info(l),
          update: (l) => progress.update(l),
        });
    };
    return fault;
  };
  return {
    kind: 'docker',
    async inject(nodeName, kind, options) {
      const node = nodeByName(config, nodeName);
      if (!node)
        throw new NotFoundError(
          `${nodeName} is not one of this cluster's containers (${config.nodes.map((n) => n.name).join(', ')}); for another cluster use --fault-cmd`,
        );
      if (isPartitionShape(kind)) {
        const shape = await injectPartitionShape(await docker(), kind, node.name, new Map(config.nodes.map((n) => [n.name, n.container])), options?.pick);
        return mended(shape, node.name);
      }
      const fault = await injectFault(await docker(), node.container, kind, options);
      return kind === 'partition' ? mended(fault, node.name) : fault;
    },
    async check(kind) {
      checkFaultFitsCluster(kind, config.nodes.length);
      await checkFaultSupported(await docker(), config.nodes[0]!.container, kind);
    },
  };
}
